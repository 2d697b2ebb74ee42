# The player client's HTTP calls against a scripted API (a TCP_Server answering HTTP/1.1 on a local
# port): the session token kept and sent, Idempotency-Keys on mutations, the API-hosted probe (the
# live journey's stack has an edge, so only here), problem+json as {ok: false, code}, and
# wait_for_assignment through 409 ASSIGNMENT_NOT_READY and a match that ended. Run headless:
#   godot3-server --path sdks/godot -s tests/http_test.gd
# Prints each failed check and "godot-http: N passed, M failed" last.
extends "res://tests/checks.gd"

const PlayerClient = preload("res://addons/matchplane/player_client.gd")

var tcp := TCP_Server.new()
var port := 0
var connections = []
var requests = []  # {method, path, headers (lower-case names), body}
var answers = {}  # "METHOD path" -> [[status, body], ...], taken in order; the last one repeats


func _initialize() -> void:
	for candidate in range(39100, 39200):
		if tcp.listen(candidate, "127.0.0.1") == OK:
			port = candidate
			break
	check(port > 0, "the stand-in API listens")
	if port > 0:
		yield(client_tests(), "completed")
	tcp.stop()
	report("godot-http")


func client_tests():
	var client = PlayerClient.new("http://127.0.0.1:%d/" % port)
	root.add_child(client)
	answer("POST /v1/sessions", 201, {"token": "tok-1", "playerId": "p-1"})
	var session = yield(client.create_session(), "completed")
	check(session.ok and client.session_token == "tok-1" and client.player_id == "p-1", "the session's token and player are kept", str(session))
	check(not requests[0].headers.has("authorization") and requests[0].body == "{}", "signing in sends no token", str(requests[0]))

	answer("GET /v1/queue/options", 200, {"regions": ["eu-west"], "probeEdges": {}, "heartbeatIntervalMs": 5000})
	answer("POST /v1/probes/eu-west/challenge", 201, {"challengeId": "c-1", "nonce": "n-1"})
	answer("POST /v1/probes/eu-west/answer", 200, {"region": "eu-west", "estimateMs": 12})
	var probed = yield(client.probe_all(null, 2), "completed")
	check(probed.failed.empty() and probed.measured["eu-west"].estimateMs == 12.0, "a region without an edge is probed at the API", str(probed))
	var answers_sent = find("POST /v1/probes/eu-west/answer")
	check(answers_sent.size() == 2 and parse_json(answers_sent[0].body).hash() == {"challengeId": "c-1", "nonce": "n-1"}.hash(),
		"each sample answers its challenge's id and nonce", str(answers_sent))
	var challenges = find("POST /v1/probes/eu-west/challenge")
	check(challenges.size() == 2 and challenges[0].headers.get("authorization") == "Bearer tok-1", "calls carry the session token")
	check(challenges[0].headers.has("idempotency-key") and challenges[0].headers["idempotency-key"] != challenges[1].headers.get("idempotency-key"),
		"each mutation has its own Idempotency-Key")

	answer("POST /v1/queue/tickets", 409, {"type": "about:blank", "title": "Conflict", "code": "ALREADY_QUEUED", "detail": "already queued"})
	var ticket = yield(client.create_ticket("duel", {"skill": 3}), "completed")
	check(not ticket.ok and ticket.status == 409 and ticket.code == "ALREADY_QUEUED" and ticket.message == "already queued", "problem+json answers {ok: false, code, message}", str(ticket))
	var sent = find("POST /v1/queue/tickets")[0].body
	check(sent == "{\"attributes\":{\"skill\":3},\"mode\":\"duel\"}", "a ticket carries its mode and attributes", sent)

	var not_ready = {"code": "ASSIGNMENT_NOT_READY", "title": "Conflict"}
	answer("GET /v1/matches/m-1/assignment", 409, not_ready)
	answer("GET /v1/matches/m-1/assignment", 200, {"matchId": "m-1", "endpoint": "127.0.0.1:1", "joinToken": "t"})
	answer("GET /v1/matches/m-1/events?after=0", 200, {"state": "PROCESS_READY", "revision": 2, "events": []})
	var assignment = yield(client.wait_for_assignment("m-1", 5000, 20), "completed")
	check(assignment.ok and assignment.body.matchId == "m-1", "wait_for_assignment polls through ASSIGNMENT_NOT_READY", str(assignment))

	answer("GET /v1/matches/m-2/assignment", 409, not_ready)
	answer("GET /v1/matches/m-2/events?after=0", 200, {"state": "FAILED", "revision": 4, "events": []})
	var ended = yield(client.wait_for_assignment("m-2", 5000, 20), "completed")
	check(not ended.ok and ended.code == "ASSIGNMENT_UNAVAILABLE", "wait_for_assignment stops when the match has ended", str(ended))

	answer("DELETE /v1/sessions/current", 401, {"code": "UNAUTHENTICATED"})
	var signed_out = yield(client.end_session(), "completed")
	check(signed_out.ok and client.session_token == "", "a session already gone counts as ended", str(signed_out))
	client.queue_free()


func answer(route: String, status: int, body: Dictionary) -> void:
	if not answers.has(route):
		answers[route] = []
	answers[route].append([status, to_json(body)])


func find(route: String) -> Array:
	var out = []
	for r in requests:
		if r.method + " " + r.path == route:
			out.append(r)
	return out


# Serves every frame: reads whole requests, answers the scripted answer and closes.
func _idle(_delta: float) -> bool:
	while tcp.is_connection_available():
		connections.append({"peer": tcp.take_connection(), "data": PoolByteArray()})
	for c in connections.duplicate():
		var available = c.peer.get_available_bytes()
		if available > 0:
			# Pool arrays are values: the grown copy is stored back.
			var data: PoolByteArray = c.data
			data.append_array(c.peer.get_data(available)[1])
			c.data = data
		var text: String = c.data.get_string_from_utf8()
		var head_end = text.find("\r\n\r\n")
		if head_end < 0:
			continue
		var lines = text.substr(0, head_end).split("\r\n")
		var headers = {}
		for i in range(1, lines.size()):
			var line = lines[i]
			var colon = line.find(":")
			headers[line.substr(0, colon).to_lower()] = line.substr(colon + 1, line.length()).strip_edges()
		var body = text.substr(head_end + 4, text.length())
		if body.length() < int(headers.get("content-length", "0")):
			continue
		var request_line = lines[0].split(" ")
		var request = {"method": request_line[0], "path": request_line[1], "headers": headers, "body": body}
		requests.append(request)
		var route = request.method + " " + request.path
		var scripted = [404, to_json({"code": "NOT_SCRIPTED", "detail": route})]
		if answers.has(route):
			scripted = answers[route][0] if answers[route].size() == 1 else answers[route].pop_front()
		var kind = "application/json" if scripted[0] < 400 else "application/problem+json"
		var bytes = scripted[1].to_utf8()
		var head = "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % [scripted[0], kind, bytes.size()]
		c.peer.put_data(head.to_utf8() + bytes)
		c.peer.disconnect_from_host()
		connections.erase(c)
	return false
