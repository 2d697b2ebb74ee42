# Probes at a region's edge (edge_prober.gd) against two scripted servers (tests/stand_in_api.gd):
# the API and the edge, with rounds (slow ones) and without (404). Samples are taken in rounds and a
# chain's measurements go to the API once it has ended, none while a sample is on the wire, a chain
# ending once it is record_within_ms old; each challenge a round brought is answered byte for byte;
# every measurement is handed to the API byte for byte, in order; an edge without rounds is probed
# in pairs from a fresh challenge; the API's first refusal ends the probe; a sample count outside
# 1..50 or a record_within_ms not positive sends nothing. Run headless:
#   godot3-server --path sdks/godot -s tests/probe_test.gd
# Prints each failed check and "godot-probe: N passed, M failed" last.
extends "res://tests/checks.gd"

const PlayerClient = preload("res://addons/matchplane/player_client.gd")
const EdgeProber = preload("res://addons/matchplane/edge_prober.gd")
const StandInApi = preload("res://tests/stand_in_api.gd")
const PLAYER = "22222222-2222-4222-8222-222222222222"
const RECORDED = {"measurementId": "m", "region": "eu", "rttMs": 4, "estimateMs": 4, "samplesMs": [4]}

var api = StandInApi.new()
var edge = StandInApi.new()


func _initialize() -> void:
	root.add_child(api)
	root.add_child(edge)
	check(api.listen() > 0 and edge.listen() > 0, "the stand-in API and edge listen")
	if api.port > 0 and edge.port > 0:
		yield(probe_tests(), "completed")
	raw_member_tests()
	api.queue_free()
	edge.queue_free()
	report("godot-probe")


# Written unlike Godot's to_json would: spacing, a brace and a key name inside strings, nesting,
# and an integer a float would not keep.
func challenge_text(n: int) -> String:
	return "{ \"v\":1,\"nonce\":\"n%d\",\"note\":\"a \\\"}\\\" b\",\"x\":[1,{\"challenge\":2}],\"issuedAtUs\":1234567890123457 }" % n


func measurement_text(n: int) -> String:
	return "{\"measurementId\":\"m%d\",\"samplesMs\":[4.25], \"tag\":\"measurement\"}" % n


func round_text(n: int) -> String:
	return "{\"measurement\": " + measurement_text(n) + " ,\"challenge\":" + challenge_text(n + 1) + "}"


func answer_body(n: int) -> String:
	return "{\"playerId\":\"%s\",\"region\":\"eu\",\"challenge\":%s}" % [PLAYER, challenge_text(n)]


func edge_route() -> String:
	var paths = []
	for request in edge.requests:
		paths.append(request.path.trim_prefix("/v1/probe/"))
	return PoolStringArray(paths).join(",")


func handed_over() -> Array:
	var bodies = []
	for request in api.find("POST /v1/probes/measurements"):
		bodies.append(request.body)
	return bodies


func probe_tests():
	var client = PlayerClient.new(api.url())
	root.add_child(client)
	api.answer("POST /v1/sessions", 201, {"token": "s", "playerId": PLAYER})
	yield(client.create_session(), "completed")
	api.answer("GET /v1/queue/options", 200, {"regions": ["eu"], "heartbeatIntervalMs": 5000, "probeEdges": {"eu": ["udp://127.0.0.1:9", edge.url()]}})
	yield(client.queue_options(), "completed")

	# With rounds, each held back 300 ms, and 500 ms to record within: the first chain is 600 ms old
	# after its second round, so its third sample is a plain answer. The client's requests, the
	# edge's and the API's, in the order sent, show where the recordings fall.
	api.reset()
	api.answer("POST /v1/probes/measurements", 200, RECORDED)
	for n in [0, 3]:
		edge.answer("POST /v1/probe/challenges", 201, challenge_text(n))
	for n in [0, 1, 3]:
		edge.answer("POST /v1/probe/rounds", 200, round_text(n), [], 300)
	for n in [2, 4]:
		edge.answer("POST /v1/probe/answers", 200, measurement_text(n))
	var route = []
	client.transport().connect("request_sent", self, "_collect_probe_path", [route])
	var probed = yield(client.probe("eu", 5, 500), "completed")
	client.transport().disconnect("request_sent", self, "_collect_probe_path")
	check(probed.ok and probed.body.estimateMs == 4.0, "answers the API's last answer", str(probed))
	check_equal(PoolStringArray(route).join(","), "challenges,rounds,rounds,answers,measurements,measurements,measurements,challenges,rounds,answers,measurements,measurements",
		"takes samples in rounds and records a chain once it ends, nothing on the wire, a chain ending once it is record_within_ms old")
	var sent = edge.requests
	check(sent[0].body == "{\"playerId\":\"%s\",\"region\":\"eu\"}" % PLAYER and not sent[0].headers.has("authorization"),
		"asks the edge for a challenge for this player and region, without the session token", str(sent[0]))
	check(sent[1].body == answer_body(0) and sent[2].body == answer_body(1) and sent[3].body == answer_body(2) and sent[6].body == answer_body(4),
		"answers each challenge, the edge's or a round's, byte for byte", str(sent))
	check_equal(handed_over(), [measurement_text(0), measurement_text(1), measurement_text(2), measurement_text(3), measurement_text(4)],
		"hands every measurement to the API byte for byte, in order")
	var recordings = api.find("POST /v1/probes/measurements")
	check(recordings[0].headers.get("authorization") == "Bearer s" and not recordings[0].headers.has("idempotency-key"),
		"hands measurements over with the session token, sent once")

	# Without rounds (an edge from before them): the refused round's challenge is dropped, then pairs.
	api.reset()
	edge.reset()
	api.answer("POST /v1/probes/measurements", 200, RECORDED)
	for n in [0, 1, 2]:
		edge.answer("POST /v1/probe/challenges", 201, challenge_text(n))
	edge.answer("POST /v1/probe/rounds", 404, {"code": "NOT_FOUND"})
	for n in [1, 2]:
		edge.answer("POST /v1/probe/answers", 200, measurement_text(n))
	probed = yield(client.probe("eu", 2), "completed")
	check(probed.ok, "an edge without rounds is probed", str(probed))
	check_equal(edge_route(), "challenges,rounds,challenges,answers,challenges,answers", "an edge without rounds is probed a fresh challenge and an answer at a time")
	check(edge.requests.size() == 6 and edge.requests[3].body == answer_body(1) and edge.requests[5].body == answer_body(2),
		"the challenge of the refused round is not answered late", str(edge.requests))
	check_equal(handed_over(), [measurement_text(1), measurement_text(2)], "hands each pair's measurement to the API")

	# The API refuses the first measurement: the probe answers the refusal and hands over no more.
	api.reset()
	edge.reset()
	api.answer("POST /v1/probes/measurements", 410, {"code": "PROBE_MEASUREMENT_EXPIRED"})
	edge.answer("POST /v1/probe/challenges", 201, challenge_text(0))
	edge.answer("POST /v1/probe/rounds", 200, round_text(0))
	edge.answer("POST /v1/probe/answers", 200, measurement_text(1))
	probed = yield(client.probe("eu", 5), "completed")
	check(not probed.ok and probed.code == "PROBE_MEASUREMENT_EXPIRED", "the API's refusal is answered", str(probed))
	check_equal(handed_over().size(), 1, "nothing is handed over after a refusal")

	# An edge that fails answers its failure, sent once (a retry would time the backoff).
	api.reset()
	edge.reset()
	edge.answer("POST /v1/probe/challenges", 201, challenge_text(0))
	edge.answer("POST /v1/probe/rounds", 503, {"code": "UNAVAILABLE"})
	probed = yield(client.probe("eu", 3), "completed")
	check(not probed.ok and probed.status == 503 and edge_route() == "challenges,rounds" and handed_over().empty(),
		"an edge's failure is answered, the round sent once", "%s %s" % [str(probed), edge_route()])

	api.reset()
	edge.reset()
	for samples in [0, -1, EdgeProber.MAX_SAMPLES + 1]:
		probed = yield(client.probe("eu", samples), "completed")
		check(not probed.ok and probed.code == "INVALID_SAMPLES" and "from 1 to 50" in probed.message, "%d samples is refused" % samples, str(probed))
	client.last_queue_options = null
	probed = yield(client.probe("eu", 0), "completed")
	check(not probed.ok and probed.code == "INVALID_SAMPLES", "0 samples at the API is refused", str(probed))
	client.last_queue_options = {"probeEdges": {"eu": [edge.url()]}}
	for record_within_ms in [0, -1]:
		probed = yield(client.probe("eu", 3, record_within_ms), "completed")
		check(not probed.ok and probed.code == "INVALID_RECORD_WITHIN_MS" and "positive number of milliseconds" in probed.message,
			"recording within %d ms is refused" % record_within_ms, str(probed))
	check(api.requests.empty() and edge.requests.empty(), "a refused sample count or record_within_ms sends nothing", str(api.requests))
	client.queue_free()


# The probe's paths, an edge's (/v1/probe/...) and the API's recordings, as the client sends them.
func _collect_probe_path(_method: int, url: String, into: Array) -> void:
	for prefix in ["/v1/probe/", "/v1/probes/"]:
		if url.find(prefix) >= 0:
			into.append(url.substr(url.find(prefix) + prefix.length(), url.length()))


func raw_member_tests() -> void:
	var reply = "{\"a\":{\"measurement\":1}, \"measurement\" : [1, \"]\"] ,\"challenge\":\"x\\\\\",\"n\":12}"
	check_equal(EdgeProber.raw_member(reply, "measurement"), "[1, \"]\"]", "a top-level member's value as written, not a nested one's")
	check_equal(EdgeProber.raw_member(reply, "challenge"), "\"x\\\\\"", "a string ending in an escaped backslash")
	check_equal(EdgeProber.raw_member(reply, "n"), "12", "a number")
	check_equal(EdgeProber.raw_member(reply, "missing"), "", "a missing member is \"\"")
