# A scripted API for the HTTP tests (tests/http_test.gd, tests/server_test.gd): a TCP_Server on a
# local port answering HTTP/1.1, one request per connection. Each route ("METHOD /v1/path") answers
# its scripted answers in order, the last one repeating; an answer of status 0 closes the
# connection without answering (a network failure); an answer may be held back delay_ms (a slow
# server). Every request is recorded as it arrives.
extends Node

var port := 0
var requests = []  # {method, path, headers (lower-case names), body}
var _tcp := TCP_Server.new()
var _connections = []
var _answers = {}  # route -> [[status, body text, extra header lines, delay_ms], ...]


# Listens on the first free port of 39100-39199; answers the port, or 0.
func listen() -> int:
	for candidate in range(39100, 39200):
		if _tcp.listen(candidate, "127.0.0.1") == OK:
			port = candidate
			return port
	return 0


func url() -> String:
	return "http://127.0.0.1:%d/" % port


func _exit_tree() -> void:
	_tcp.stop()


# Forgets the scripted answers and the recorded requests (a new section of a test).
func reset() -> void:
	_answers.clear()
	requests.clear()


# headers: extra header lines, e.g. ["Retry-After: 1"]; body: JSON text as written, or a value.
func answer(route: String, status: int, body = {}, headers := [], delay_ms := 0) -> void:
	if not _answers.has(route):
		_answers[route] = []
	_answers[route].append([status, to_json(body) if typeof(body) != TYPE_STRING else body, headers, delay_ms])


func find(route: String) -> Array:
	var out = []
	for r in requests:
		if r.method + " " + r.path == route:
			out.append(r)
	return out


# Serves every frame: reads whole requests, answers the scripted answer and closes.
func _process(_delta: float) -> void:
	while _tcp.is_connection_available():
		_connections.append({"peer": _tcp.take_connection(), "data": PoolByteArray()})
	for c in _connections.duplicate():
		if c.has("answer_at"):
			if OS.get_ticks_msec() >= c.answer_at:
				_respond(c, c.scripted)
			continue
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
		var scripted = [404, to_json({"code": "NOT_SCRIPTED", "detail": route}), [], 0]
		if _answers.has(route):
			scripted = _answers[route][0] if _answers[route].size() == 1 else _answers[route].pop_front()
		if scripted[3] > 0:
			c.answer_at = OS.get_ticks_msec() + scripted[3]
			c.scripted = scripted
		else:
			_respond(c, scripted)


# Writes the scripted answer (none for status 0) and closes.
func _respond(c: Dictionary, scripted: Array) -> void:
	if scripted[0] > 0:
		var kind = "application/json" if scripted[0] < 400 else "application/problem+json"
		var bytes = scripted[1].to_utf8()
		var extra = ""
		for line in scripted[2]:
			extra += line + "\r\n"
		var head = "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %d\r\n%sConnection: close\r\n\r\n" % [scripted[0], kind, bytes.size(), extra]
		c.peer.put_data(head.to_utf8() + bytes)
	c.peer.disconnect_from_host()
	_connections.erase(c)
