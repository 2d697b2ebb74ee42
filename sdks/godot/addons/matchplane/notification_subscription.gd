# A player's match notifications over the /v1/notifications WebSocket (docs/asyncapi.yaml): signs
# in with the subprotocols matchplane.notifications.v1 and matchplane.bearer.<session token>,
# reconnects with backoff and resumes from the last revision seen per match, dedupes on (matchId,
# revision) and holds back anything after a gap until the server has filled it, so "event" fires
# for each match's revisions once, in order. With idle_timeout_ms set, a connection on which no
# frame arrives for that long is taken for dead and replaced like any other drop. The socket
# follows the API's replicas (api_endpoints.gd, shared with the player client's HTTP calls): a
# dropped connection moves the list on, so the reconnect goes to the next replica and resumes
# there. A match's ready check (AWAITING_ACCEPTANCE) is also announced as `ready_check`. Polled
# from _process: add it to the scene tree.
extends Node

const ApiEndpoints = preload("res://addons/matchplane/api_endpoints.gd")
const RevisionTracker = preload("res://addons/matchplane/revision_tracker.gd")
const SUBPROTOCOL = "matchplane.notifications.v1"
const UNAUTHENTICATED = 4401
const SLOW_CONSUMER = 4008  # the server's buffer for this client filled: the replica is fine
const AWAITING_ACCEPTANCE = "AWAITING_ACCEPTANCE"
const RESUME_CHUNK = 20  # the server's default resume bound (NOTIFY_RESUME_MAX_MATCHES)
# idle_timeout_ms: IDLE_INTERVALS times the heartbeat interval the server announces in `ready`
# (the TypeScript SDK's default where it sees the server's pings), before `ready` the server's
# default interval (NOTIFY_HEARTBEAT_INTERVAL_MS, 30 s).
const IDLE_FROM_ANNOUNCED = -1
const IDLE_INTERVALS = 2.5
const DEFAULT_HEARTBEAT_INTERVAL_MS = 30000

signal ready_for_events(player_id)  # the server accepted the token (after each (re)connect)
signal event(message)  # every match event once, in revision order per match, without a gap
signal resynced(message)  # the server jumped a match to its current state
# A match waits for this player's answer (client.accept_match / decline_match): once per match,
# from its AWAITING_ACCEPTANCE event (or a resync to that state).
signal ready_check(match_id, message)
signal reconnecting(code, reason, delay_ms)
signal failed(message)  # a refused client message (the server's error), or an unparsable frame
signal done(why)  # "closed" (close()) or "unauthenticated: ..." (sign in again)

var base_delay_ms := 250
var max_delay_ms := 10000
var is_ready := false
# A connection that receives no frame for this long (ms) is dead: it is dropped and replaced, with
# a resume. 0 (the default): no such check. Godot 3's WebSocketClient answers the server's
# heartbeat pings itself and never shows them, so only text frames count here: between match
# events a healthy socket is quiet, and any limit reconnects it (cheaply: a resume) once per
# limit. IDLE_FROM_ANNOUNCED follows the server's announced interval.
var idle_timeout_ms := 0
var ended := ""

var endpoints  # api_endpoints.gd
var _endpoint := ""  # the replica of the current connection
var _token_source: FuncRef  # answers the session token at every (re)connect
var _tracker
var _socket: WebSocketClient
var _connected := false
var _close_code := 1006
var _close_reason := ""
var _attempt := 0
var _wait_ms := -1.0
var _rng := RandomNumberGenerator.new()
var _announced_interval_ms := DEFAULT_HEARTBEAT_INTERVAL_MS
var _idle_ms := 0.0  # since the last frame of the open connection
var _ready_checks := {}  # match id -> true once its ready check was announced


# base_urls: the API's base URL, several, or an api_endpoints.gd list to share;
# seen_before: {match id: revision} to resume from.
func _init(base_urls, token_source: FuncRef, seen_before := {}) -> void:
	endpoints = base_urls if base_urls is ApiEndpoints else ApiEndpoints.new(base_urls)
	_token_source = token_source
	_tracker = RevisionTracker.new(seen_before)
	_rng.randomize()


func _ready() -> void:
	_connect_socket()


# Also follows a match from after_revision (0: its whole history), e.g. one learnt from a ticket.
func follow(match_id: String, after_revision := 0) -> void:
	var from = _tracker.follow(match_id, after_revision)
	# Not connected: the next connect resumes from the tracker, which covers this.
	send_resume({match_id: from})


# The last revision delivered per match: keep it to resume in a later run.
func last_seen() -> Dictionary:
	return _tracker.last_seen()


# Ends the subscription and its connection. Idempotent.
func close() -> void:
	_end("closed")


# The current replica's /v1/notifications, over wss for an https API.
func socket_url() -> String:
	var api_url: String = endpoints.api_url()
	return ("wss" if api_url.begins_with("https") else "ws") + api_url.substr(api_url.find(":")) + "notifications"


func _connect_socket() -> void:
	var token = _token_source.call_func()
	if token == null or token == "":
		_end("unauthenticated: no session token")
		return
	_endpoint = endpoints.current()
	_socket = WebSocketClient.new()
	_socket.connect("connection_established", self, "_on_established")
	_socket.connect("data_received", self, "_on_data")
	_socket.connect("server_close_request", self, "_on_close_request")
	_socket.connect("connection_closed", self, "_on_lost")
	_socket.connect("connection_error", self, "_on_lost", [false])
	_close_code = 1006
	_close_reason = ""
	var started = _socket.connect_to_url(socket_url(), PoolStringArray([SUBPROTOCOL, "matchplane.bearer." + token]))
	if started != OK:
		call_deferred("_on_lost", false)


func _process(delta: float) -> void:
	if _socket != null:
		_socket.poll()
	if _connected and ended == "" and idle_limit_ms() > 0:
		_idle_ms += delta * 1000.0
		if _idle_ms > idle_limit_ms():
			_drop_idle_socket()
	if _wait_ms >= 0:
		_wait_ms -= delta * 1000.0
		if _wait_ms < 0 and ended == "":
			_connect_socket()


# The idle limit in force now (ms), 0 when off.
func idle_limit_ms() -> int:
	if idle_timeout_ms == IDLE_FROM_ANNOUNCED:
		return int(IDLE_INTERVALS * _announced_interval_ms)
	return int(max(idle_timeout_ms, 0))


# The connection is taken for dead: its signals are cut (a dead peer never completes the close
# handshake, and a late close must not count twice) and it is replaced like a dropped one.
func _drop_idle_socket() -> void:
	var dead = _socket
	for signal_name in ["connection_established", "data_received", "server_close_request", "connection_closed", "connection_error"]:
		for connection in dead.get_signal_connection_list(signal_name):
			dead.disconnect(signal_name, connection.target, connection.method)
	dead.disconnect_from_host(1000, "no frame in time")
	_close_code = 1006
	_close_reason = "no frame within %d ms" % idle_limit_ms()
	_on_lost(false)


func _on_established(_protocol: String) -> void:
	_connected = true
	_idle_ms = 0.0
	_socket.get_peer(1).set_write_mode(WebSocketPeer.WRITE_MODE_TEXT)
	# Sent at once (the server holds it until the token is checked): what this client has.
	var chunk = {}
	var seen = _tracker.last_seen()
	for match_id in seen:
		chunk[match_id] = seen[match_id]
		if chunk.size() == RESUME_CHUNK:
			send_resume(chunk)
			chunk = {}
	if not chunk.empty():
		send_resume(chunk)


func _on_data() -> void:
	var peer = _socket.get_peer(1)
	_idle_ms = 0.0
	while peer.get_available_packet_count() > 0:
		receive_text(peer.get_packet().get_string_from_utf8())


func _on_close_request(code: int, reason: String) -> void:
	_close_code = code
	_close_reason = reason


func _on_lost(_clean: bool) -> void:
	# The socket is kept (not freed while it emits this signal) until the reconnect replaces it.
	_connected = false
	if ended != "":
		return
	if _close_code == UNAUTHENTICATED:
		_end("unauthenticated: " + (_close_reason if _close_reason != "" else "session refused"))
		return
	if _close_code != SLOW_CONSUMER:
		endpoints.failover(_endpoint)
	var backoff = min(max_delay_ms, base_delay_ms * pow(2, min(_attempt, 16)))
	# Jitter spreads the reconnects of every client of a replica that went away at once.
	var delay_ms = int(backoff / 2 + _rng.randi_range(0, int(backoff / 2)))
	if _close_code == SLOW_CONSUMER:
		delay_ms = min(delay_ms, base_delay_ms)
	_attempt += 1
	emit_signal("reconnecting", _close_code, _close_reason, delay_ms)
	_wait_ms = delay_ms


# Handles one frame of the server's (public so the ordering logic is testable without a socket).
func receive_text(text: String) -> void:
	var parsed = JSON.parse(text)
	if parsed.error != OK or typeof(parsed.result) != TYPE_DICTIONARY:
		emit_signal("failed", "unparsable notification frame: " + text.left(200))
		return
	var message: Dictionary = parsed.result
	match message.get("type"):
		"ready":
			_attempt = 0
			is_ready = true
			if typeof(message.get("heartbeatIntervalMs")) == TYPE_REAL and message.heartbeatIntervalMs > 0:
				_announced_interval_ms = int(message.heartbeatIntervalMs)
			emit_signal("ready_for_events", message.get("playerId"))
		"event":
			message.revision = int(message.revision)
			var accepted = _tracker.accept(message)
			# A gap: ask for what is missing (once per gap); what follows it is held meanwhile.
			if accepted.resume_from >= 0:
				send_resume({message.matchId: accepted.resume_from})
			_deliver(accepted.deliver)
		"resync":
			message.revision = int(message.revision)
			var released = _tracker.resync(message)
			# BUFFER_OVERFLOW says nothing of the match: the reconnect's replay does.
			if message.reason != "BUFFER_OVERFLOW":
				emit_signal("resynced", message)
				_announce_ready_check(message)
			_deliver(released)
		"error":
			emit_signal("failed", "%s: %s" % [message.get("code", "UNKNOWN"), message.get("message", "")])


func _deliver(events: Array) -> void:
	for e in events:
		_announce_ready_check(e)
		emit_signal("event", e)


func _announce_ready_check(message: Dictionary) -> void:
	if message.get("state") != AWAITING_ACCEPTANCE or _ready_checks.has(message.matchId):
		return
	_ready_checks[message.matchId] = true
	emit_signal("ready_check", message.matchId, message)


# Sends a resume for {match id: revision}; dropped while not connected (the next connect resumes).
# With record_frames set, every resume frame is also kept in sent_frames (for tests).
var record_frames := false
var sent_frames := []


func send_resume(matches: Dictionary) -> void:
	var frame = to_json({"type": "resume", "matches": matches})
	if record_frames:
		sent_frames.append(frame)
	if _connected:
		_socket.get_peer(1).put_packet(frame.to_utf8())


func _end(why: String) -> void:
	if ended != "":
		return
	ended = why
	_wait_ms = -1
	if _socket != null:
		_socket.disconnect_from_host(1000, "client closed")
	emit_signal("done", why)
