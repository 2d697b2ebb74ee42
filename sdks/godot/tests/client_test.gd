# The player client's logic that needs no stack: revision ordering, gap and resync handling, the
# notification frames' handling and resume frames, the ready check announced, probe-edge
# selection, request ids. Run headless:
#   godot3-server --path sdks/godot -s tests/client_test.gd
# Prints each failed check and "godot-client: N passed, M failed" last; the exit code is 1 on failure.
extends "res://tests/checks.gd"

const RevisionTracker = preload("res://addons/matchplane/revision_tracker.gd")
const NotificationSubscription = preload("res://addons/matchplane/notification_subscription.gd")
const PlayerClient = preload("res://addons/matchplane/player_client.gd")
const ApiTransport = preload("res://addons/matchplane/api_transport.gd")

var delivered = []
var resyncs = []
var failures = []
var ready_checks = []


func revisions(events: Array) -> Array:
	var out = []
	for e in events:
		out.append(e.revision)
	return out


func ev(match_id: String, revision: int) -> Dictionary:
	return {"type": "event", "event": "match.state_changed", "matchId": match_id, "revision": revision, "state": "S%d" % revision}


func _initialize() -> void:
	tracker_tests()
	subscription_tests()
	ready_check_tests()
	edge_tests()
	var id = ApiTransport.uuid_v4()
	check(id.length() == 36 and id[14] == "4" and id[19] in ["8", "9", "a", "b"], "idempotency keys are v4 UUIDs", id)
	check(ApiTransport.uuid_v4() != id, "each idempotency key is new")
	report("godot-client")


func tracker_tests() -> void:
	var t = RevisionTracker.new()
	check(revisions(t.accept(ev("m", 1)).deliver) == [1], "a new match's first event is delivered")
	check(t.accept(ev("m", 1)).deliver.empty(), "a duplicate revision is dropped")
	var gap = t.accept(ev("m", 3))
	check(gap.deliver.empty() and gap.resume_from == 1, "an event after a gap is held and a resume from the last revision asked", str(gap))
	var again = t.accept(ev("m", 4))
	check(again.deliver.empty() and again.resume_from == -1, "a second event after the same gap asks no second resume", str(again))
	check(t.accept(ev("m", 3)).deliver.empty(), "a held revision received twice is kept once")
	var filled = t.accept(ev("m", 2))
	check(revisions(filled.deliver) == [2, 3, 4], "the replayed revision releases what was held, in order", str(revisions(filled.deliver)))
	check(to_json(t.last_seen()) == to_json({"m": 4}), "the last delivered revision is kept per match", str(t.last_seen()))

	var resumed = RevisionTracker.new({"m": 2})
	check(resumed.accept(ev("m", 2)).deliver.empty(), "a revision delivered in an earlier run is not delivered again")
	check(resumed.follow("m", 1) == 2, "follow never goes back before what was delivered")
	check(resumed.follow("n", 3) == 3 and resumed.last_seen().n == 3, "follow starts a new match from the given revision")

	var r = RevisionTracker.new({"m": 1})
	r.accept(ev("m", 5))
	r.accept(ev("m", 7))
	check(r.resync({"matchId": "m", "revision": 3, "state": "X", "reason": "BUFFER_OVERFLOW"}).empty() and r.last_seen().m == 1,
		"a BUFFER_OVERFLOW resync changes nothing")
	var released = r.resync({"matchId": "m", "revision": 4, "state": "X", "reason": "RETENTION_EXPIRED"})
	check(revisions(released) == [5], "a resync jumps to its revision and releases what follows on", str(revisions(released)))
	check(r.last_seen().m == 5, "revision 7 stays held after the resync's 4 and the held 5", str(r.last_seen()))
	check(revisions(r.accept(ev("m", 6)).deliver) == [6, 7], "the rest is released once its gap is filled")


func subscription_tests() -> void:
	var s = NotificationSubscription.new("http://127.0.0.1:1/", funcref(self, "no_token"), {"m": 1})
	check(s.socket_url() == "ws://127.0.0.1:1/v1/notifications", "the socket URL is the API's /v1/notifications over ws", s.socket_url())
	var secure = NotificationSubscription.new("https://mm.example.com", funcref(self, "no_token"))
	check(secure.socket_url() == "wss://mm.example.com/v1/notifications", "an https API is followed over wss", secure.socket_url())
	secure.free()
	s.record_frames = true
	s.connect("event", self, "_on_event")
	s.connect("resynced", self, "_on_resync")
	s.receive_text(to_json({"type": "ready", "playerId": "p"}))
	check(s.is_ready, "ready marks the subscription ready")
	s.receive_text(to_json(ev("m", 2)))
	s.receive_text(to_json(ev("m", 4)))
	check(s.sent_frames.size() == 1 and parse_json(s.sent_frames[0]).matches.m == 2.0 and parse_json(s.sent_frames[0]).type == "resume",
		"a gap sends a resume from the last delivered revision", str(s.sent_frames))
	s.receive_text(to_json({"type": "resync", "matchId": "m", "revision": 3, "state": "ALLOCATING", "reason": "UNKNOWN_REVISION"}))
	check(revisions(delivered) == [2, 4], "events reach the handler once, in order, the held one after the resync", str(revisions(delivered)))
	check(resyncs.size() == 1 and resyncs[0].revision == 3, "the resync is reported")
	s.connect("failed", self, "_on_failed")
	s.receive_text("not json")
	s.receive_text(to_json({"type": "error", "code": "MATCH_NOT_FOUND", "message": "no such match"}))
	check(failures.size() == 2 and failures[1] == "MATCH_NOT_FOUND: no such match", "unparsable frames and the server's errors are reported", str(failures))
	s.follow("n", 0)
	check(s.sent_frames.size() == 2 and parse_json(s.sent_frames[1]).matches.has("n"), "following a match asks for its history")
	s.free()


# A match AWAITING_ACCEPTANCE is announced once as ready_check, after a gap filled too; a resync
# to that state (the event itself past retention) announces it as well.
func ready_check_tests() -> void:
	var s = NotificationSubscription.new("http://127.0.0.1:1", funcref(self, "no_token"))
	s.connect("ready_check", self, "_on_ready_check")
	var awaiting = {"type": "event", "event": "match.created", "matchId": "m", "revision": 1, "state": "AWAITING_ACCEPTANCE"}
	s.receive_text(to_json(awaiting))
	s.receive_text(to_json(awaiting))
	check(ready_checks.size() == 1 and ready_checks[0][0] == "m" and ready_checks[0][1].revision == 1, "an AWAITING_ACCEPTANCE event announces the ready check once", str(ready_checks))
	s.receive_text(to_json(ev("m", 2)))
	check_equal(ready_checks.size(), 1, "later states announce nothing")
	var late = awaiting.duplicate()
	late.matchId = "n"
	late.revision = 2
	s.follow("n", 0)  # its whole history is awaited
	s.receive_text(to_json(late))
	check_equal(ready_checks.size(), 1, "a ready check after a gap waits for the gap to be filled")
	s.receive_text(to_json({"type": "event", "event": "match.created", "matchId": "n", "revision": 1, "state": "S"}))
	check(ready_checks.size() == 2 and ready_checks[1][0] == "n", "the held ready check is announced once the gap is filled", str(ready_checks))
	s.receive_text(to_json({"type": "resync", "matchId": "o", "revision": 1, "state": "AWAITING_ACCEPTANCE", "reason": "RETENTION_EXPIRED"}))
	check(ready_checks.size() == 3 and ready_checks[2][0] == "o", "a resync to AWAITING_ACCEPTANCE announces the ready check", str(ready_checks))
	s.receive_text(to_json({"type": "resync", "matchId": "q", "revision": 1, "state": "AWAITING_ACCEPTANCE", "reason": "BUFFER_OVERFLOW"}))
	check_equal(ready_checks.size(), 3, "a BUFFER_OVERFLOW resync announces nothing (the replay after the reconnect does)")
	s.free()


func edge_tests() -> void:
	var options = {"probeEdges": {"eu-west": ["udp://10.0.0.1:9", "http://edge.eu:8080"], "us-east": ["udp://x:1"]}}
	check(PlayerClient.http_edge_of(options, "eu-west") == "http://edge.eu:8080", "the first http(s) edge of a region is probed")
	check(PlayerClient.http_edge_of(options, "us-east") == "", "a region without an http edge is probed at the API")
	check(PlayerClient.http_edge_of(null, "eu-west") == "", "without queue options the API is probed")


func no_token() -> String:
	return ""


func _on_event(e: Dictionary) -> void:
	delivered.append(e)


func _on_ready_check(match_id: String, message: Dictionary) -> void:
	ready_checks.append([match_id, message])


func _on_resync(m: Dictionary) -> void:
	resyncs.append(m)


func _on_failed(message: String) -> void:
	failures.append(message)
