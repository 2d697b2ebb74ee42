# The player's side of the game server's join protocol (apps/game-server/README.md "Join
# protocol"): a WebSocket at ws://<endpoint>/join whose first message is {"type":"join","token"}.
# The token travels in a message, never in the URL, so it does not end up in access logs.
# Polled from _process: add it to the scene tree, then yield on join()'s "completed".
extends Node

# The join protocol's close codes.
const NORMAL = 1000
const BAD_JOIN_MESSAGE = 4400
const INVALID_TOKEN = 4401
const NOT_ON_ROSTER = 4403
const JOIN_TIMEOUT = 4408
const DUPLICATE = 4409
const JOINING_CLOSED = 4410

signal joined(player_id, team)
signal message(message)  # every message after joined (started, tick, ended), in order
signal ended(outcome, winning_team)  # COMPLETED (winning_team an int) or FAILED (null)
signal closed(code)  # the connection closed (never before joined's or the join's failure)

var player_id := ""
var team := -1
var messages := []  # every message after joined so far
var outcome := ""  # from ended: COMPLETED or FAILED
var winning_team = null
var close_code := -1  # once closed
var join_timeout_ms := 10000

var _socket := WebSocketClient.new()
var _url: String
var _token: String
var _server_code := 1006
var _server_reason := ""
var _join_result = null
var _elapsed_ms := 0.0

signal _join_settled


# endpoint: the assignment's host:port; scheme "wss" for a server behind TLS.
func _init(endpoint: String, join_token: String, scheme := "ws") -> void:
	_url = "%s://%s/join" % [scheme, endpoint]
	_token = join_token
	_socket.connect("connection_established", self, "_on_established")
	_socket.connect("data_received", self, "_on_data")
	_socket.connect("server_close_request", self, "_on_close_request")
	_socket.connect("connection_closed", self, "_on_closed")
	_socket.connect("connection_error", self, "_on_closed", [false])


# Connects, sends the join and waits for joined. Answers {ok: true, playerId, team} or
# {ok: false, code (the close code, or 0 for a timeout), message}.
func join() -> Dictionary:
	var started = _socket.connect_to_url(_url)
	if started != OK:
		_settle({"ok": false, "code": 0, "message": "could not connect to %s (error %d)" % [_url, started]})
		yield(get_tree(), "idle_frame")
	else:
		yield(self, "_join_settled")
	return _join_result


# Leaves the match (the server keeps a player who drops out during play out).
func leave(code := NORMAL, reason := "client closed") -> void:
	_socket.disconnect_from_host(code, reason)


func _process(delta: float) -> void:
	_socket.poll()
	if _join_result == null and close_code < 0:
		_elapsed_ms += delta * 1000.0
		if _elapsed_ms > join_timeout_ms:
			_settle({"ok": false, "code": 0, "message": "no join answer in time from " + _url})
			_socket.disconnect_from_host(NORMAL, "join timed out")


func _on_established(_protocol: String) -> void:
	var peer = _socket.get_peer(1)
	peer.set_write_mode(WebSocketPeer.WRITE_MODE_TEXT)
	peer.put_packet(to_json({"type": "join", "token": _token}).to_utf8())


func _on_data() -> void:
	var peer = _socket.get_peer(1)
	while peer.get_available_packet_count() > 0:
		var parsed = JSON.parse(peer.get_packet().get_string_from_utf8())
		if parsed.error != OK or typeof(parsed.result) != TYPE_DICTIONARY:
			continue
		_receive(parsed.result)


func _receive(received: Dictionary) -> void:
	if _join_result == null:
		if received.get("type") != "joined":
			_settle({"ok": false, "code": 0, "message": "expected joined, got " + to_json(received)})
			return
		player_id = str(received.playerId)
		team = int(received.team)
		_settle({"ok": true, "playerId": player_id, "team": team})
		emit_signal("joined", player_id, team)
		return
	messages.append(received)
	emit_signal("message", received)
	if received.get("type") == "ended":
		outcome = str(received.outcome)
		winning_team = int(received.winningTeam) if typeof(received.get("winningTeam")) == TYPE_REAL else null
		emit_signal("ended", outcome, winning_team)


func _on_close_request(code: int, reason: String) -> void:
	_server_code = code
	_server_reason = reason


func _on_closed(_clean: bool) -> void:
	if close_code >= 0:
		return
	close_code = _server_code
	_settle({"ok": false, "code": _server_code, "message": "game server refused the join (%d) %s" % [_server_code, _server_reason]})
	emit_signal("closed", close_code)


func _settle(result: Dictionary) -> void:
	if _join_result != null:
		return
	_join_result = result
	emit_signal("_join_settled")
