# The GDScript server client against a scripted API (tests/stand_in_api.gd): each route's path,
# body and credential, the retry policy on the server routes (a backfill request is retried
# without an Idempotency-Key, a heartbeat is sent once), the heartbeat loop until ALLOCATION_ENDED
# or stopped, a roster fetched over HTTP verified with join_auth.gd (the first roster of the vectors), a result
# whose answer was lost, and backfill polling. Run headless:
#   godot3-server --path sdks/godot -s tests/server_test.gd [--vectors=<join-auth-vectors.json>]
# Prints each failed check and "godot-server: N passed, M failed" last.
extends "res://tests/checks.gd"

const ServerClient = preload("res://addons/matchplane/server_client.gd")
const JoinAuth = preload("res://addons/matchplane/join_auth.gd")
const Bytes = preload("res://addons/matchplane/join_auth_bytes.gd")
const StandInApi = preload("res://tests/stand_in_api.gd")
const BASE = "/v1/servers/gs-roster-1/"

var api = StandInApi.new()
var beats_ended = []
var beats_failed = []


func _initialize() -> void:
	root.add_child(api)
	check(api.listen() > 0, "the stand-in API listens")
	if api.port > 0:
		yield(report_tests(), "completed")
		yield(heartbeat_tests(), "completed")
		yield(roster_tests(), "completed")
		yield(backfill_tests(), "completed")
	api.queue_free()
	report("godot-server")


# A server client (server id gs-roster-1, the vectors' roster's) retrying after 10-20 ms.
func new_client():
	api.reset()
	var client = ServerClient.new(api.url(), "gs-roster-1", "cred-1")
	root.add_child(client)
	client.transport().base_delay_ms = 20
	return client


func report_tests():
	var client = new_client()
	api.answer("POST " + BASE + "register", 503, {"code": "UNAVAILABLE"})
	api.answer("POST " + BASE + "register", 200, {"matchId": "m-1", "serverId": "gs-roster-1", "state": "ASSIGNMENT_READY", "revision": 3})
	var registered = yield(client.register("sha256:abc"), "completed")
	var sent = api.find("POST " + BASE + "register")
	check(registered.ok and registered.body.state == "ASSIGNMENT_READY", "register answers the match's state", str(registered))
	check(sent.size() == 2 and sent[0].body == "{\"imageDigest\":\"sha256:abc\",\"protocolVersion\":1}", "register sends the image and protocol version, retried through a 503", str(sent))
	check(sent.size() == 2 and sent[0].headers.get("authorization") == "Bearer cred-1" and not sent[0].headers.has("idempotency-key"),
		"server calls carry the workload credential (register is idempotent by route: no key)", str(sent))

	api.answer("POST " + BASE + "initial-connect", 200, {"matchId": "m-1", "state": "IN_PROGRESS", "revision": 4, "noShowPlayerIds": []})
	var connected = yield(client.initial_connect(["p-1", "p-2"]), "completed")
	sent = api.find("POST " + BASE + "initial-connect")
	check(connected.ok and connected.body.state == "IN_PROGRESS", "initial_connect answers the match's state", str(connected))
	check(sent.size() == 1 and sent[0].body == "{\"connectedPlayerIds\":[\"p-1\",\"p-2\"]}", "initial_connect sends who connected", str(sent))

	api.answer("POST " + BASE + "result", 200, {"matchId": "m-1", "state": "COMPLETED", "revision": 5})
	var ended = yield(client.result("COMPLETED", 1.0, {"p-1": 3}), "completed")
	sent = api.find("POST " + BASE + "result")
	check(ended.ok and ended.body.state == "COMPLETED", "result answers the recorded state", str(ended))
	check(sent.size() == 1 and sent[0].body == "{\"outcome\":\"COMPLETED\",\"scores\":{\"p-1\":3},\"winningTeam\":1}", "result sends the outcome, winning team and scores", str(sent))

	api.reset()
	api.answer("POST " + BASE + "result", 0)
	api.answer("POST " + BASE + "result", 401, {"code": "ALLOCATION_ENDED"})
	var lost = yield(client.result("FAILED"), "completed")
	check(lost.ok and lost.body.get("alreadyRecorded") == true and api.find("POST " + BASE + "result").size() == 2,
		"a result whose answer was lost, then ALLOCATION_ENDED, was recorded", str(lost))
	check_equal(api.find("POST " + BASE + "result")[0].body, "{\"outcome\":\"FAILED\"}", "a draw or failure sends no winning team")
	var fresh = new_client()
	api.answer("POST " + BASE + "result", 401, {"code": "ALLOCATION_ENDED"})
	var refused = yield(fresh.result("COMPLETED", 0), "completed")
	check(not refused.ok and refused.code == "ALLOCATION_ENDED", "ALLOCATION_ENDED without a lost attempt is a failure", str(refused))

	api.answer("POST " + BASE + "players/p%201/left", 200, {"playerId": "p 1", "state": "LEFT"})
	api.answer("POST " + BASE + "players/p%201/rejoined", 410, {"code": "PLAYER_ABANDONED"})
	var left = yield(fresh.player_left("p 1"), "completed")
	var rejoined = yield(fresh.player_rejoined("p 1"), "completed")
	check(left.ok and not rejoined.ok and rejoined.code == "PLAYER_ABANDONED", "presence reports go to the player's encoded path", str([left, rejoined]))
	client.queue_free()
	fresh.queue_free()


func heartbeat_tests():
	var client = new_client()
	client.connect("heartbeats_ended", self, "_on_beats_ended")
	client.connect("heartbeat_failed", self, "_on_beat_failed")
	api.answer("POST " + BASE + "heartbeat", 503, {"code": "UNAVAILABLE"})
	var once = yield(client.heartbeat(), "completed")
	check(not once.ok and api.find("POST " + BASE + "heartbeat").size() == 1, "a heartbeat is sent once (the next beat is its retry)", str(once))

	api.reset()
	var alive = {"matchId": "m-1", "serverId": "gs-roster-1"}
	api.answer("POST " + BASE + "heartbeat", 200, alive)
	api.answer("POST " + BASE + "heartbeat", 503, {"code": "UNAVAILABLE"})
	api.answer("POST " + BASE + "heartbeat", 200, alive)
	api.answer("POST " + BASE + "heartbeat", 401, {"code": "ALLOCATION_ENDED"})
	client.start_heartbeats(20)
	check(client.heartbeats_running(), "the heartbeat loop runs once started")
	yield(until_size(beats_ended, 1), "completed")
	check(beats_ended == ["ended"] and not client.heartbeats_running(), "the loop ends on ALLOCATION_ENDED", str(beats_ended))
	check_equal(api.find("POST " + BASE + "heartbeat").size(), 4, "the loop beats until ALLOCATION_ENDED")
	check(beats_failed.size() == 1 and beats_failed[0].status == 503, "a failed beat is reported and the loop goes on", str(beats_failed))

	api.reset()
	api.answer("POST " + BASE + "heartbeat", 200, alive)
	client.start_heartbeats(20)
	yield(create_timer(0.2), "timeout")
	client.stop_heartbeats()
	var beats = api.find("POST " + BASE + "heartbeat").size()
	yield(create_timer(0.2), "timeout")
	check(beats >= 2 and api.find("POST " + BASE + "heartbeat").size() <= beats + 1, "no beat follows stop_heartbeats", beats)
	check(beats_ended == ["ended", "stopped"], "a stopped loop says so", str(beats_ended))
	client.queue_free()


func roster_tests():
	var vectors = load_vectors()
	check(vectors != null, "the join-auth vectors load")
	if vectors == null:
		return
	var verifier = JoinAuth.new()
	var keys = {}
	for id in vectors.keys:
		keys[id] = Bytes.base64_decode(vectors.keys[id])
	verifier.set_keys(keys)
	check_equal(JoinAuth.load_key_file(write_file("user://keys.json", to_json(vectors.keys).to_utf8())).hash(), keys.hash(),
		"load_key_file reads a JSON map of base64 keys")
	var raw = Bytes.base64_decode(vectors.rawKeyBase64)
	check_equal(JoinAuth.load_key_file(write_file("user://raw.key", raw)).hash(), {"": raw}.hash(), "load_key_file takes another file as one raw key")
	check(JoinAuth.load_key_file("user://missing.key").empty(), "an unreadable key file is no keys")
	var vector = vectors.rosters[0]
	var entries = []
	for entry in vector.entries:
		entries.append({"playerId": entry.playerId, "team": 0, "joinToken": entry.token, "expiresAt": "2026-01-01T00:00:00.000Z"})
	var roster = {"matchId": vector.matchId, "serverId": vector.serverId, "endpoint": "127.0.0.1:1", "mode": "duel", "region": "eu-west",
		"revision": 1, "entries": entries, "manifest": vector.manifest}
	var client = new_client()
	api.answer("GET " + BASE + "roster", 200, roster)
	var fetched = yield(client.roster(), "completed")
	check(fetched.ok and fetched.body.entries.size() == entries.size(), "roster answers the entries", str(fetched))
	if not fetched.ok:
		return
	var now = int(vector.expect.now)
	var verified = client.verify_roster(verifier, fetched.body, vector.matchId, now)
	check(verified.ok, "a roster read over HTTP (numbers as floats) verifies", str(verified))
	var wrong_match = client.verify_roster(verifier, fetched.body, "00000000-0000-4000-8000-000000000000", now)
	check_equal(wrong_match.reason, "WRONG_MATCH", "a roster of another match is refused")
	var tampered = fetched.body.duplicate(true)
	tampered.entries[0].joinToken = tampered.entries[1].joinToken
	check_equal(client.verify_roster(verifier, tampered, vector.matchId, now).reason, "ROSTER_DIGEST_MISMATCH", "a swapped join token is refused")
	client.queue_free()


func backfill_tests():
	var client = new_client()
	var request = {"requestId": "b-1", "matchId": "m-1", "team": 0, "slots": 1, "state": "OPEN", "expiresAt": "x", "playerIds": [], "revision": 1}
	api.answer("POST " + BASE + "backfills", 0)
	api.answer("POST " + BASE + "backfills", 201, request)
	var opened = yield(client.request_backfill(0, 1, 30), "completed")
	var sent = api.find("POST " + BASE + "backfills")
	check(opened.ok and opened.body.requestId == "b-1", "request_backfill answers the request", str(opened))
	check(sent.size() == 2 and sent[0].body == "{\"slots\":1,\"team\":0,\"timeoutSeconds\":30}", "request_backfill sends team, slots and time limit", str(sent))
	check(sent.size() == 2 and not sent[0].headers.has("idempotency-key") and not sent[1].headers.has("idempotency-key"),
		"a backfill request is retried after a lost answer, without an Idempotency-Key", str(sent))

	var matched = request.duplicate()
	matched.state = "MATCHED"
	var published = request.duplicate()
	published.state = "PUBLISHED"
	published.rosterRevision = 2
	for state in [request, matched, published]:
		api.answer("GET " + BASE + "backfills/b-1", 200, state)
	var ready = yield(client.wait_for_backfill("b-1", 5000, 20), "completed")
	check(ready.ok and ready.body.state == "PUBLISHED" and api.find("GET " + BASE + "backfills/b-1").size() == 3,
		"wait_for_backfill polls until PUBLISHED", str(ready))
	api.answer("POST " + BASE + "backfills/b-1/accept", 200, published)
	var accepted = yield(client.accept_backfill("b-1", ready.body.rosterRevision), "completed")
	sent = api.find("POST " + BASE + "backfills/b-1/accept")
	check(accepted.ok and sent.size() == 1 and sent[0].body == "{\"rosterRevision\":2}", "accept_backfill sends the roster revision", str(sent))
	api.answer("POST " + BASE + "backfills/b-1/connect", 200, published)
	yield(client.report_backfill_connect("b-1", ["p-3"]), "completed")
	sent = api.find("POST " + BASE + "backfills/b-1/connect")
	check(sent.size() == 1 and sent[0].body == "{\"connectedPlayerIds\":[\"p-3\"]}", "report_backfill_connect sends who connected", str(sent))
	api.answer("DELETE " + BASE + "backfills/b-1", 409, {"code": "BACKFILL_CONFLICT"})
	var cancelled = yield(client.cancel_backfill("b-1"), "completed")
	check(not cancelled.ok and cancelled.code == "BACKFILL_CONFLICT", "cancel_backfill answers the API's refusal", str(cancelled))

	api.reset()
	var expired = request.duplicate()
	expired.state = "EXPIRED"
	api.answer("GET " + BASE + "backfills/b-2", 200, expired)
	var gone = yield(client.wait_for_backfill("b-2", 5000, 20), "completed")
	check(gone.ok and gone.body.state == "EXPIRED" and api.find("GET " + BASE + "backfills/b-2").size() == 1, "wait_for_backfill stops at a terminal state", str(gone))
	client.queue_free()


func write_file(path: String, bytes: PoolByteArray) -> String:
	var file = File.new()
	file.open(path, File.WRITE)
	file.store_buffer(bytes)
	file.close()
	return path


func load_vectors():
	var path = "../../test/fixtures/join-auth-vectors.json"
	for given in OS.get_cmdline_args():
		if given.begins_with("--vectors="):
			path = given.substr("--vectors=".length(), given.length())
	var file = File.new()
	if file.open(path, File.READ) != OK:
		return null
	var parsed = JSON.parse(file.get_as_text())
	file.close()
	return parsed.result if parsed.error == OK else null


func until_size(items: Array, wanted: int) -> void:
	var deadline = OS.get_ticks_msec() + 5000
	while items.size() < wanted and OS.get_ticks_msec() < deadline:
		yield(create_timer(0.02), "timeout")


func _on_beats_ended(reason: String) -> void:
	beats_ended.append(reason)


func _on_beat_failed(answer: Dictionary) -> void:
	beats_failed.append(answer)
