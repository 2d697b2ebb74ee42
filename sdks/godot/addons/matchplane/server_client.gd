# A dedicated game server's client of the control plane (libs/contracts/src/server-api.ts), with
# the workload credential the allocator issued for one server id: register, heartbeats, the signed
# roster (verified offline with join_auth.gd), initial connect, the result, player presence and
# backfill. Calls are coroutines answering {ok, status, body} or {ok: false, status, code, message}
# (api_transport.gd). Every call but the heartbeat is retried on network errors and 5xx: register,
# initial-connect, result, presence and the backfill accept, connect and cancel are idempotent by
# the route's semantics (a repeat is answered like the first), the roster and a backfill's state are
# reads, and a backfill request is retried without an Idempotency-Key (the route takes none: a
# repeat of a request still OPEN is answered with the one it opened;
# docs/decisions/2026-12-07-backfill-requests-carry-no-idempotency-key.md). Once the match has
# ended and its allocation is released, the credential is refused (401 ALLOCATION_ENDED)
# everywhere but the result route. Add the client to the scene tree before calling it.
extends Node

const ApiTransport = preload("res://addons/matchplane/api_transport.gd")
const PROTOCOL_VERSION = 1  # SERVER_PROTOCOL_VERSION
# A third of the control plane's default SERVER_HEARTBEAT_TIMEOUT_MS, so two beats may be lost.
const DEFAULT_HEARTBEAT_INTERVAL_MS = 3333
const TERMINAL_BACKFILL_STATES = ["FILLED", "CANCELLED", "EXPIRED"]

# A beat that failed without ending the loop (the next beat is its retry).
signal heartbeat_failed(answer)
# The loop ended: "stopped" (stop_heartbeats) or "ended" (401 ALLOCATION_ENDED: nothing is left to
# keep alive).
signal heartbeats_ended(reason)

var server_id: String
var _credential: String
var _api
var _heartbeat_runs := 0  # loops started so far
var _heartbeat_run := 0  # the running loop's number; 0: none
# A child, not a SceneTree timer: a loop waiting on it ends quietly when the client is freed.
var _beat_timer := Timer.new()
# Some result attempt went unanswered: the API may have recorded it.
var _result_may_be_recorded := false


# base_url: MATCHPLANE_API_URL (the /v1 prefix is added); server_id: MATCHPLANE_SERVER_ID;
# credential: MATCHPLANE_SERVER_CREDENTIAL. See from_environment().
func _init(base_url: String, id: String, credential: String) -> void:
	assert(id != "" and credential != "")
	server_id = id
	_credential = credential
	_api = ApiTransport.new(base_url)
	add_child(_api)
	_beat_timer.one_shot = true
	add_child(_beat_timer)


# What the allocator's providers hand a game server (GameServerEnv): {apiUrl, serverId,
# credential, matchId, joinKeysFile, port}; a variable that is not set is "".
static func environment() -> Dictionary:
	return {
		"apiUrl": OS.get_environment("MATCHPLANE_API_URL"),
		"serverId": OS.get_environment("MATCHPLANE_SERVER_ID"),
		"credential": OS.get_environment("MATCHPLANE_SERVER_CREDENTIAL"),
		"matchId": OS.get_environment("MATCHPLANE_MATCH_ID"),
		"joinKeysFile": OS.get_environment("MATCHPLANE_JOIN_KEYS_FILE"),
		"port": OS.get_environment("MATCHPLANE_SERVER_PORT"),
	}


# The HTTP transport, whose retry settings apply to every call of this client.
func transport() -> Node:
	return _api


# The server is up and players may connect (the match becomes ASSIGNMENT_READY).
func register(image_digest: String, protocol_version := PROTOCOL_VERSION) -> Dictionary:
	var body = to_json({"protocolVersion": protocol_version, "imageDigest": image_digest})
	var answer = yield(_send(HTTPClient.METHOD_POST, "register", body), "completed")
	return answer


# One heartbeat, sent once: the next beat is the retry. start_heartbeats sends them by itself.
func heartbeat() -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_POST, "heartbeat", "", ApiTransport.RETRY_NEVER), "completed")
	return answer


# Heartbeats now and then every interval_ms after the previous beat settled, until
# stop_heartbeats() or 401 ALLOCATION_ENDED (then heartbeats_ended). Start it once registered at
# the latest: a registered server silent past the timeout has its match FAILED SERVER_LOST.
func start_heartbeats(interval_ms := DEFAULT_HEARTBEAT_INTERVAL_MS) -> void:
	assert(interval_ms > 0)
	stop_heartbeats()
	_heartbeat_runs += 1
	_heartbeat_run = _heartbeat_runs
	_beat_until_stopped(_heartbeat_run, interval_ms)


# Ends the loop; a beat in flight completes but none follows.
func stop_heartbeats() -> void:
	if _heartbeat_run != 0:
		_heartbeat_run = 0
		_beat_timer.stop()
		emit_signal("heartbeats_ended", "stopped")


func heartbeats_running() -> bool:
	return _heartbeat_run != 0


func _beat_until_stopped(run: int, interval_ms: int) -> void:
	while _heartbeat_run == run:
		var answer = yield(heartbeat(), "completed")
		if _heartbeat_run != run:
			return
		if not answer.ok and answer.code == "ALLOCATION_ENDED":
			_heartbeat_run = 0
			emit_signal("heartbeats_ended", "ended")
			return
		if not answer.ok:
			emit_signal("heartbeat_failed", answer)
		_beat_timer.start(interval_ms / 1000.0)
		yield(_beat_timer, "timeout")


# The match's roster: every player's team and join token, with the allocator's signed manifest.
func roster() -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_GET, "roster", ""), "completed")
	return answer


# Verifies a roster() body offline: the manifest's signature over every entry's player and join
# token, for this server and match_id, at now_ms. Answers join_auth.gd's {ok, reason, message}.
func verify_roster(verifier, roster_body: Dictionary, match_id: String, now_ms: int) -> Dictionary:
	var manifest = roster_body.get("manifest", {}).duplicate()
	# Godot's JSON reads numbers as floats; the verifier requires integers.
	for field in ["entryCount", "issuedAt", "revision"]:
		if typeof(manifest.get(field)) == TYPE_REAL and manifest[field] == floor(manifest[field]):
			manifest[field] = int(manifest[field])
	var entries = []
	for entry in roster_body.get("entries", []):
		entries.append({"playerId": entry.get("playerId"), "token": entry.get("joinToken")})
	return verifier.verify_roster(manifest, entries, {"serverId": server_id, "matchId": match_id, "now": now_ms})


# Who connected before the connect deadline; everyone else is a no-show.
func initial_connect(connected_player_ids: Array) -> Dictionary:
	var body = to_json({"connectedPlayerIds": connected_player_ids})
	var answer = yield(_send(HTTPClient.METHOD_POST, "initial-connect", body), "completed")
	return answer


# The match's outcome ("COMPLETED" or "FAILED"; winning_team null for a draw; scores {player id:
# number} or null); ends it. A repeat after a lost answer is answered as recorded; one that
# conflicts with how the match ended is 409 RESULT_CONFLICT. When an earlier attempt went unanswered
# and a retry is refused with 401 ALLOCATION_ENDED, that attempt was recorded and the server
# released: answered ok with body {alreadyRecorded: true}.
func result(outcome: String, winning_team = null, scores = null) -> Dictionary:
	var body = {"outcome": outcome}
	if winning_team != null:
		body.winningTeam = int(winning_team)
	if scores != null:
		body.scores = scores
	var answer = yield(_send(HTTPClient.METHOD_POST, "result", to_json(body)), "completed")
	if answer.get("unanswered", 0) > 0:
		_result_may_be_recorded = true
	if not answer.ok and answer.code == "ALLOCATION_ENDED" and _result_may_be_recorded:
		return {"ok": true, "status": answer.status, "body": {"alreadyRecorded": true}}
	return answer


# A joined player's connection dropped: it may rejoin within its mode's grace window.
func player_left(player_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_POST, "players/%s/left" % player_id.percent_encode(), ""), "completed")
	return answer


# The player who left is back; 410 PLAYER_ABANDONED: it was too late.
func player_rejoined(player_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_POST, "players/%s/rejoined" % player_id.percent_encode(), ""), "completed")
	return answer


# ---- Backfill: request, poll until PUBLISHED, verify the roster revision, accept, report who came.

# Asks to fill `slots` open places on `team` (0-based) within timeout_seconds (-1: the API's
# default, 30): 201 OPEN, or 200 with the request a repeat of the same one opened (which is what
# makes the retry of a lost answer safe without an Idempotency-Key).
func request_backfill(team: int, slots: int, timeout_seconds := -1) -> Dictionary:
	var body = {"team": team, "slots": slots}
	if timeout_seconds >= 0:
		body.timeoutSeconds = timeout_seconds
	var answer = yield(_send(HTTPClient.METHOD_POST, "backfills", to_json(body)), "completed")
	return answer


# A backfill request's current state.
func backfill(request_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_GET, "backfills/" + request_id.percent_encode(), ""), "completed")
	return answer


# Polls a backfill request until it is PUBLISHED (fetch and verify the roster, then
# accept_backfill) or terminal (FILLED, CANCELLED, EXPIRED); TIMEOUT after timeout_ms.
func wait_for_backfill(request_id: String, timeout_ms := 60000, poll_ms := 500) -> Dictionary:
	var deadline = OS.get_ticks_msec() + timeout_ms
	while true:
		var answer = yield(backfill(request_id), "completed")
		if not answer.ok or answer.body.state == "PUBLISHED" or answer.body.state in TERMINAL_BACKFILL_STATES:
			return answer
		if OS.get_ticks_msec() + poll_ms > deadline:
			return ApiTransport.failure(0, "TIMEOUT", "backfill %s was not published within %d ms" % [request_id, timeout_ms], null)
		yield(get_tree().create_timer(poll_ms / 1000.0), "timeout")
	return null


# Withdraws a backfill request; 409 BACKFILL_CONFLICT once ASSIGNED or FILLED.
func cancel_backfill(request_id: String) -> Dictionary:
	var answer = yield(_send(HTTPClient.METHOD_DELETE, "backfills/" + request_id.percent_encode(), ""), "completed")
	return answer


# The server verified roster revision roster_revision (the request's) and admits its added players.
func accept_backfill(request_id: String, roster_revision: int) -> Dictionary:
	var path = "backfills/%s/accept" % request_id.percent_encode()
	var answer = yield(_send(HTTPClient.METHOD_POST, path, to_json({"rosterRevision": roster_revision})), "completed")
	return answer


# Which of the request's added players connected; the rest are no-shows (state FILLED).
func report_backfill_connect(request_id: String, connected_player_ids: Array) -> Dictionary:
	var path = "backfills/%s/connect" % request_id.percent_encode()
	var answer = yield(_send(HTTPClient.METHOD_POST, path, to_json({"connectedPlayerIds": connected_player_ids})), "completed")
	return answer


func _send(method: int, route: String, body: String, retry_mode := ApiTransport.RETRY_SAFE) -> Dictionary:
	var path = "servers/%s/%s" % [server_id.percent_encode(), route]
	var answer = yield(_api.send(method, path, body, retry_mode, _credential), "completed")
	return answer
