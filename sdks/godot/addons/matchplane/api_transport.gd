# One HTTP call to the Matchplane API (or a region's probe edge) through an HTTPRequest child:
# JSON in and out, the bearer credential, problem+json errors as {ok: false, status, code,
# message, problem}, and the TypeScript SDK's retry policy (libs/sdk http.transport.ts), across
# the API's replicas (api_endpoints.gd): an attempt that gets no answer or 502/503/504 moves the
# list to the next replica, where the retry goes. Every call is a coroutine (yield on "completed")
# and answers a Dictionary; it always yields at least once, so `yield(call, "completed")` is safe.
extends Node

const ApiEndpoints = preload("res://addons/matchplane/api_endpoints.gd")

# How a call may be retried (send's retry_mode), as in the TypeScript SDK:
# a mutation with one fresh Idempotency-Key per logical call that every retry resends, so the
# server applies it once and replays its answer;
const RETRY_IDEMPOTENCY_KEY = "idempotency-key"
# naturally idempotent (reads, the server routes' repeatable reports), retried without a key;
const RETRY_SAFE = "safe"
# sent once (a probe answer: a retry would measure the backoff, not the network).
const RETRY_NEVER = "never"
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

# Every request as it is sent, the API's and a probe edge's (what a game may log or count).
signal request_sent(method, url)

var endpoints  # api_endpoints.gd: the replicas, shared with the notification socket
var api_url: String setget , get_api_url  # the current replica's base URL with its /v1/ prefix
var timeout_seconds := 10.0
# Further attempts after the first, for network errors, 5xx (not 501), 409
# IDEMPOTENCY_KEY_IN_PROGRESS and, with retry_rate_limited, 429.
var retries := 2
var base_delay_ms := 250  # the first retry's backoff; doubles with each retry, with jitter
var max_delay_ms := 5000
# Off by default, as in the TypeScript SDK: a rate limit or a no-show cooldown is usually something
# to show the player, not to wait out silently.
var retry_rate_limited := false
var max_retry_after_ms := 30000  # a longer Retry-After is answered at once


# base_urls: a base URL, several ("a,b" or an Array), or an api_endpoints.gd list to share.
func _init(base_urls) -> void:
	endpoints = base_urls if base_urls is ApiEndpoints else ApiEndpoints.new(base_urls)


func get_api_url() -> String:
	return endpoints.api_url()


# method: HTTPClient.METHOD_*; path below /v1/; body: JSON text or ""; retry_mode: RETRY_*.
# The answer also counts the attempts that got no answer (`unanswered`): the server may have
# applied them, so a later refusal can mean "already done".
func send(method: int, path: String, body: String, retry_mode: String, bearer: String) -> Dictionary:
	var headers = ["Accept: application/json, application/problem+json"]
	if bearer != "":
		headers.append("Authorization: Bearer " + bearer)
	if retry_mode == RETRY_IDEMPOTENCY_KEY:
		# One key per logical call: every retry below resends these same headers.
		headers.append("Idempotency-Key: " + uuid_v4())
	var max_retries = 0 if retry_mode == RETRY_NEVER else retries
	var unanswered = 0
	var attempt = 0
	while true:
		var endpoint = endpoints.current()
		var answer = yield(request(method, endpoint + "/v1/" + path, headers, body), "completed")
		if not answer.ok and answer.code == "TRANSPORT_ERROR":
			unanswered += 1
		if ApiEndpoints.replica_unavailable(answer):
			endpoints.failover(endpoint)
		answer.unanswered = unanswered
		var delay_ms = retry_delay_ms(answer, attempt) if attempt < max_retries else -1
		if delay_ms < 0:
			return answer
		yield(get_tree().create_timer(delay_ms / 1000.0), "timeout")
		attempt += 1
	return null


# How long to wait before retrying after `answer` (the attempt-th retry, from 0), or -1 when it
# must not be retried.
func retry_delay_ms(answer: Dictionary, attempt: int) -> int:
	if answer.ok:
		return -1
	var backoff = min(max_delay_ms, base_delay_ms * pow(2, attempt))
	# Jitter spreads the retries of many clients hit by one outage.
	var jittered = int(backoff / 2.0 + randf() * backoff / 2.0)
	if answer.code == "TRANSPORT_ERROR":
		return jittered
	var status: int = answer.status
	var retryable = (status >= 500 and status != 501) \
		or (status == 409 and answer.code == "IDEMPOTENCY_KEY_IN_PROGRESS") \
		or (status == 429 and retry_rate_limited)
	if not retryable:
		return -1
	if answer.get("retry_after_seconds", -1) < 0:
		return jittered
	var retry_after_ms = answer.retry_after_seconds * 1000
	return retry_after_ms if retry_after_ms <= max_retry_after_ms else -1


# Answers {ok, status, text, body (parsed JSON or null)} or, on failure, also code, message and
# retry_after_seconds (-1 without a usable Retry-After). Sent once.
func request(method: int, url: String, headers: Array, body: String) -> Dictionary:
	if body != "":
		headers = headers + ["Content-Type: application/json"]
	var http = HTTPRequest.new()
	http.use_threads = true
	http.timeout = timeout_seconds
	add_child(http)
	emit_signal("request_sent", method, url)
	var started = http.request(url, PoolStringArray(headers), true, method, body)
	if started != OK:
		http.queue_free()
		yield(get_tree(), "idle_frame")
		return failure(0, "REQUEST_NOT_STARTED", "could not start %s (error %d)" % [url, started], null)
	var done = yield(http, "request_completed")  # [result, status, headers, body bytes]
	http.queue_free()
	if done[0] != HTTPRequest.RESULT_SUCCESS:
		return failure(0, "TRANSPORT_ERROR", "%s failed (HTTPRequest result %d)" % [url, done[0]], null)
	var status: int = done[1]
	var text: String = done[3].get_string_from_utf8()
	var parsed = null
	if text != "":
		var json = JSON.parse(text)
		if json.error == OK:
			parsed = json.result
		elif status < 400:
			return failure(status, "UNPARSABLE_ANSWER", "%s answered text that is not JSON" % url, null)
	if status >= 200 and status < 300:
		return {"ok": true, "status": status, "text": text, "body": parsed}
	var problem = parsed if typeof(parsed) == TYPE_DICTIONARY else {}
	var answer = failure(status, str(problem.get("code", "HTTP_%d" % status)), str(problem.get("detail", problem.get("title", text))), problem)
	answer.retry_after_seconds = parse_retry_after(header_value(done[2], "retry-after"), OS.get_unix_time())
	return answer


static func failure(status: int, code: String, message: String, problem) -> Dictionary:
	return {"ok": false, "status": status, "code": code, "message": message, "problem": problem, "body": null, "retry_after_seconds": -1}


static func header_value(headers, name: String) -> String:
	for line in headers:
		var colon = line.find(":")
		if colon > 0 and line.substr(0, colon).strip_edges().to_lower() == name:
			return line.substr(colon + 1, line.length()).strip_edges()
	return ""


# Retry-After in seconds (delay-seconds, or an IMF-fixdate such as "Sun, 06 Nov 1994 08:49:37 GMT"
# counted from now_unix), or -1 when absent or unreadable.
static func parse_retry_after(value: String, now_unix: int) -> int:
	value = value.strip_edges()
	if value == "":
		return -1
	if value.is_valid_integer():
		return int(value) if int(value) >= 0 else -1
	var parts = value.replace(",", "").split(" ", false)  # [day, dd, Mon, yyyy, hh:mm:ss, GMT]
	if parts.size() != 6 or parts[5] != "GMT" or not parts[1].is_valid_integer() or not parts[3].is_valid_integer():
		return -1
	var month = MONTHS.find(parts[2])
	var time = parts[4].split(":")
	if month < 0 or time.size() != 3:
		return -1
	var at = OS.get_unix_time_from_datetime({"year": int(parts[3]), "month": month + 1, "day": int(parts[1]),
		"hour": int(time[0]), "minute": int(time[1]), "second": int(time[2])})
	return int(max(0, at - now_unix))


static func uuid_v4() -> String:
	var bytes = Crypto.new().generate_random_bytes(16)
	bytes[6] = (bytes[6] & 0x0f) | 0x40
	bytes[8] = (bytes[8] & 0x3f) | 0x80
	var hex = bytes.hex_encode()
	return "%s-%s-%s-%s-%s" % [hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4), hex.substr(16, 4), hex.substr(20, 12)]


# Godot's JSON reads every number as a float; the API's counts and revisions are integers.
static func as_int(value) -> int:
	return int(value) if typeof(value) in [TYPE_REAL, TYPE_INT] else 0
