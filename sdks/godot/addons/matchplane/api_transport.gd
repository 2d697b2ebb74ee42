# One HTTP call to the Matchplane API (or a region's probe edge) through an HTTPRequest child:
# JSON in and out, the bearer credential, an Idempotency-Key on mutations, problem+json errors as
# {ok: false, status, code, message, problem}. Every call is a coroutine (yield on "completed") and
# answers a Dictionary; it always yields at least once, so `yield(call, "completed")` is safe.
extends Node

var api_url: String  # the API's base URL with its /v1/ prefix
var timeout_seconds := 10.0


func _init(base_url: String) -> void:
	api_url = base_url.rstrip("/") + "/v1/"


# method: HTTPClient.METHOD_*; path below /v1/; body: JSON text or "".
func send(method: int, path: String, body: String, idempotency_key: bool, bearer: String) -> Dictionary:
	var headers = ["Accept: application/json, application/problem+json"]
	if bearer != "":
		headers.append("Authorization: Bearer " + bearer)
	# One key per logical call, so a retried mutation is applied once.
	if idempotency_key:
		headers.append("Idempotency-Key: " + uuid_v4())
	var answer = yield(request(method, api_url + path, headers, body), "completed")
	return answer


# Answers {ok, status, text, body (parsed JSON or null)} or, on failure, also code and message.
func request(method: int, url: String, headers: Array, body: String) -> Dictionary:
	if body != "":
		headers = headers + ["Content-Type: application/json"]
	var http = HTTPRequest.new()
	http.use_threads = true
	http.timeout = timeout_seconds
	add_child(http)
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
	return failure(status, str(problem.get("code", "HTTP_%d" % status)), str(problem.get("detail", problem.get("title", text))), problem)


static func failure(status: int, code: String, message: String, problem) -> Dictionary:
	return {"ok": false, "status": status, "code": code, "message": message, "problem": problem, "body": null}


static func uuid_v4() -> String:
	var bytes = Crypto.new().generate_random_bytes(16)
	bytes[6] = (bytes[6] & 0x0f) | 0x40
	bytes[8] = (bytes[8] & 0x3f) | 0x80
	var hex = bytes.hex_encode()
	return "%s-%s-%s-%s-%s" % [hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4), hex.substr(16, 4), hex.substr(20, 12)]


# Godot's JSON reads every number as a float; the API's counts and revisions are integers.
static func as_int(value) -> int:
	return int(value) if typeof(value) in [TYPE_REAL, TYPE_INT] else 0
