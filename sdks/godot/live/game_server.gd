# A dedicated game server in GDScript, the game server side of the live journey (godot-live): the
# allocator's local provider launches it (through the node entry test/sdk-live/godot-live.spec.ts
# writes) with the GameServerEnv variables (MATCHPLANE_SERVER_ID, _CREDENTIAL, _MATCH_ID,
# _JOIN_KEYS_FILE, _API_URL, _SERVER_PORT). It plays the reference server's match
# (apps/game-server) with server_client.gd: fetch the roster and verify it with join_auth.gd,
# listen for players on the join protocol, start heartbeats, register, wait until everyone joined
# or CONNECT_DEADLINE_MS passed, report initial-connect, send ticks for MATCH_DURATION_MS (one point
# per tick received; the team with the most points wins, ties to the lowest team), report the
# result, send `ended` and close 1000. A joined player whose connection drops during play is
# reported LEFT (player_left) and may rejoin with a valid token of its own (reported with
# player_rejoined; refused 4410 once the control plane says it abandoned), as the reference server
# lets it. Not here: backfill of no-shows (the reference server's). Exit codes as the reference
# server's: 0 done, 1 a step failed, 2 the roster was refused.
extends SceneTree

const ServerClient = preload("res://addons/matchplane/server_client.gd")
const JoinAuth = preload("res://addons/matchplane/join_auth.gd")
const GameConnection = preload("res://addons/matchplane/game_connection.gd")  # the close codes
# What it registers as, whatever GAME_SERVER_IMAGE_DIGEST says: the journey's proof that this
# server, not the reference one, played the match.
const IMAGE_DIGEST = "gdscript:sdks/godot/live/game_server.gd"

var socket := WebSocketServer.new()
var verifier = JoinAuth.new()
var client
var server_id := ""
var match_id := ""
var teams_of = {}  # roster: player id -> team
var joined = {}  # player id -> peer id
var peers = {}  # peer id -> {player: id or "", since: ms}
var joining_open := true
var playing := false  # from initial-connect to the end: a drop then is reported LEFT
var joined_once = {}  # player id -> true once joined: only they may rejoin once joining closed
var left_reports = {}  # player id -> its player_left report's coroutine state, while in flight
var handshake_timeout_ms := 5000


func setting(name: String, default: int) -> int:
	var value = OS.get_environment(name)
	return int(value) if value.is_valid_integer() else default


func log_line(text: String) -> void:
	print("[godot game server %s] %s" % [server_id, text])


func now_ms() -> int:
	return OS.get_system_time_msecs()


func _initialize() -> void:
	OS.low_processor_usage_mode = true
	OS.low_processor_usage_mode_sleep_usec = 2000
	socket.connect("client_connected", self, "_on_connected")
	socket.connect("data_received", self, "_on_data")
	socket.connect("client_disconnected", self, "_on_disconnected")
	_run()


func _run() -> void:
	var env = ServerClient.environment()
	server_id = env.serverId
	match_id = env.matchId
	if server_id == "" or env.credential == "" or env.apiUrl == "" or not env.port.is_valid_integer():
		log_line("no match assigned (the MATCHPLANE_* variables are unset)")
		quit(1)
		return
	var problem = verifier.set_keys(JoinAuth.load_key_file(env.joinKeysFile))
	if problem != "":
		log_line("join keys unusable: " + problem)
		quit(1)
		return
	handshake_timeout_ms = setting("JOIN_HANDSHAKE_TIMEOUT_MS", 5000)
	client = ServerClient.new(env.apiUrl, server_id, env.credential)
	root.add_child(client)
	client.transport().retries = 3
	client.connect("heartbeat_failed", self, "_on_heartbeat_failed")

	var roster = yield(fetch_roster(setting("ROSTER_WAIT_MS", 30000)), "completed")
	if not roster.ok:
		log_line("could not fetch the roster: %s %s" % [roster.code, roster.message])
		quit(1)
		return
	var verified = client.verify_roster(verifier, roster.body, match_id, now_ms())
	if not verified.ok:
		log_line("roster rejected (%s): %s; not registering" % [verified.reason, verified.message])
		quit(2)
		return
	for entry in roster.body.entries:
		teams_of[entry.playerId] = int(entry.team)
	# Listening first: registering tells the control plane players may connect now.
	if socket.listen(int(env.port)) != OK:
		log_line("cannot listen on port " + env.port)
		quit(1)
		return
	log_line("roster verified (%d players); accepting players on port %s" % [teams_of.size(), env.port])
	# Beating from before registration: once registered, silence fails the match SERVER_LOST.
	client.start_heartbeats(setting("SERVER_HEARTBEAT_INTERVAL_MS", setting("SERVER_HEARTBEAT_TIMEOUT_MS", 10000) / 3))
	var registered = yield(client.register(IMAGE_DIGEST), "completed")
	if not registered.ok:
		yield(fail("register", registered), "completed")
		return
	log_line("registered: match %s" % registered.body.state)

	var deadline = now_ms() + setting("CONNECT_DEADLINE_MS", 10000)
	while joined.size() < teams_of.size() and now_ms() < deadline:
		yield(create_timer(0.02), "timeout")
	joining_open = false
	var connected = joined.keys()
	connected.sort()
	var initial = yield(client.initial_connect(connected), "completed")
	if not initial.ok:
		yield(fail("report initial-connect", initial), "completed")
		return
	log_line("initial-connect: %d/%d players, match %s" % [connected.size(), teams_of.size(), initial.body.state])
	if initial.body.state in ["FAILED", "CANCELLED", "COMPLETED"]:
		yield(end_match({"type": "ended", "outcome": "FAILED"}, GameConnection.NORMAL, "match " + initial.body.state), "completed")
		return

	playing = true
	var scores = yield(play(setting("MATCH_DURATION_MS", 5000), setting("MATCH_TICK_INTERVAL_MS", 500)), "completed")
	playing = false
	var winning_team = decide_winner(scores)
	var recorded = yield(client.result("COMPLETED", winning_team, scores), "completed")
	if not recorded.ok:
		yield(fail("report the result", recorded), "completed")
		return
	log_line("result recorded: winning team %d" % winning_team)
	yield(end_match({"type": "ended", "outcome": "COMPLETED", "winningTeam": winning_team}, GameConnection.NORMAL, "match ended"), "completed")


# The roster, polled while the allocator has not published it (409 ASSIGNMENTS_NOT_READY).
func fetch_roster(wait_ms: int) -> Dictionary:
	var deadline = now_ms() + wait_ms
	while true:
		var answer = yield(client.roster(), "completed")
		if answer.ok or answer.code != "ASSIGNMENTS_NOT_READY" or now_ms() > deadline:
			return answer
		yield(create_timer(0.25), "timeout")
	return null


# Sends every joined player a tick each tick_ms for duration_ms; answers {player id: points}.
func play(duration_ms: int, tick_ms: int) -> Dictionary:
	var scores = {}
	for player in teams_of:
		scores[player] = 0
	broadcast({"type": "started", "durationMs": duration_ms})
	var ends_at = now_ms() + duration_ms
	yield(create_timer(0.0), "timeout")  # yields even when duration_ms is 0
	var seq = 0
	while now_ms() < ends_at:
		yield(create_timer(min(tick_ms, ends_at - now_ms()) / 1000.0), "timeout")
		seq += 1
		for player in joined:
			if send(joined[player], {"type": "tick", "seq": seq, "remainingMs": max(0, ends_at - now_ms())}):
				scores[player] += 1
	return scores


# The team with the most points; a tie goes to the lowest team index.
func decide_winner(scores: Dictionary) -> int:
	var points = {}
	for player in teams_of:
		points[teams_of[player]] = points.get(teams_of[player], 0) + scores.get(player, 0)
	var teams = points.keys()
	teams.sort()
	var best = teams[0]
	for team in teams:
		if points[team] > points[best]:
			best = team
	return best


func fail(step: String, answer: Dictionary) -> void:
	log_line("could not %s: %s %s" % [step, answer.code, answer.message])
	yield(end_match(null, 1011, "could not " + step), "completed")  # exits 1


# Sends `last` (if any) to every player, closes their connections with `code`, stops the
# heartbeats and exits once the close frames are out.
func end_match(last, code: int, reason: String) -> void:
	for peer in peers.keys():
		if last != null:
			send(peer, last)
		socket.disconnect_peer(peer, code, reason)
	client.stop_heartbeats()
	var until = now_ms() + 1000
	# At least one frame, so a caller's yield on "completed" always has one to wait for.
	yield(create_timer(0.02), "timeout")
	while not peers.empty() and now_ms() < until:
		yield(create_timer(0.02), "timeout")
	socket.stop()
	log_line("done")
	quit(0 if code == GameConnection.NORMAL else 1)


func send(peer: int, message: Dictionary) -> bool:
	if not socket.has_peer(peer):
		return false
	var connection = socket.get_peer(peer)
	connection.set_write_mode(WebSocketPeer.WRITE_MODE_TEXT)
	return connection.put_packet(to_json(message).to_utf8()) == OK


func broadcast(message: Dictionary) -> void:
	for player in joined:
		send(joined[player], message)


func _idle(_delta: float) -> bool:
	socket.poll()
	for peer in peers.keys():
		if peers[peer].player == "" and now_ms() - peers[peer].since > handshake_timeout_ms:
			peers[peer].since = now_ms() + 3600000  # closed once
			socket.disconnect_peer(peer, GameConnection.JOIN_TIMEOUT, "no join message in time")
	return false


func _on_connected(peer: int, _protocol: String) -> void:
	peers[peer] = {"player": "", "since": now_ms()}


func _on_disconnected(peer: int, _clean: bool) -> void:
	var player = peers.get(peer, {}).get("player", "")
	if player != "" and joined.get(player) == peer:
		joined.erase(player)
		if playing:
			report_left(player)
	peers.erase(peer)


func report_left(player: String) -> void:
	var report = client.player_left(player)
	left_reports[player] = report
	var answer = yield(report, "completed")
	left_reports.erase(player)
	log_line("player %s left: %s" % [player, answer.body.get("rejoinDeadline", "") if answer.ok else answer.code])


# A player who dropped is back: reported after its leave (the control plane takes them in order);
# refused 4410 when the control plane says it abandoned the match.
func report_rejoined(player: String, peer: int) -> void:
	if left_reports.has(player):
		yield(left_reports[player], "completed")
	var answer = yield(client.player_rejoined(player), "completed")
	log_line("player %s rejoined: %s" % [player, "ok" if answer.ok else answer.code])
	if not answer.ok and answer.code == "PLAYER_ABANDONED" and joined.get(player) == peer:
		joined.erase(player)
		refuse(peer, GameConnection.JOINING_CLOSED, "too late to rejoin: abandoned")


# The first message must be {"type":"join","token"}; later messages are ignored.
func _on_data(peer: int) -> void:
	var text = socket.get_peer(peer).get_packet().get_string_from_utf8()
	if not peers.has(peer) or peers[peer].player != "":
		return
	var parsed = JSON.parse(text)
	var message = parsed.result if parsed.error == OK and typeof(parsed.result) == TYPE_DICTIONARY else {}
	if message.get("type") != "join" or typeof(message.get("token")) != TYPE_STRING:
		refuse(peer, GameConnection.BAD_JOIN_MESSAGE, "the first message must be {\"type\":\"join\",\"token\":...}")
		return
	var verified = verifier.verify(message.token, {"serverId": server_id, "matchId": match_id, "now": now_ms()})
	if not verified.ok:
		refuse(peer, GameConnection.INVALID_TOKEN, "invalid join token: " + verified.reason)
		return
	var player = verified.claims.playerId
	if not teams_of.has(player):
		refuse(peer, GameConnection.NOT_ON_ROSTER, "not on this match's roster")
		return
	var rejoin = joined_once.has(player)
	if not joining_open and not rejoin:
		refuse(peer, GameConnection.JOINING_CLOSED, "joining is closed")
		return
	if joined.has(player):
		refuse(peer, GameConnection.DUPLICATE, "already connected")
		return
	peers[peer].player = player
	joined[player] = peer
	joined_once[player] = true
	send(peer, {"type": "joined", "playerId": player, "team": teams_of[player]})
	log_line("player %s %s team %d" % [player, "rejoined" if rejoin else "joined", teams_of[player]])
	if rejoin and playing:
		report_rejoined(player, peer)


func refuse(peer: int, code: int, reason: String) -> void:
	peers[peer].player = "(refused)"
	socket.disconnect_peer(peer, code, reason)


func _on_heartbeat_failed(answer: Dictionary) -> void:
	log_line("heartbeat not taken: %s %s" % [answer.code, answer.message])
