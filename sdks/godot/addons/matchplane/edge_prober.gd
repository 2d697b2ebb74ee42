# RTT measured at a region's probe edge over HTTP (docs/PROBES.md): a challenge, then at once its
# answer; the edge times the gap on its own clock and answers a measurement it signed, which the
# player client hands to the API unchanged. Several samples go in rounds (each answer brings the
# next challenge), as the TypeScript and C# SDKs take them. Nothing here times anything: a client
# cannot make itself look closer than it is.
extends Reference

const ApiTransport = preload("res://addons/matchplane/api_transport.gd")
# The most samples one probe takes: the most the API keeps per player and region
# (PROBE_SAMPLES_KEPT is at most 50); more would only be thrown away.
const MAX_SAMPLES = 50
# How old a chain of samples gets before it ends and its measurements go to the API: a third of the
# API's default PROBE_MEASUREMENT_MAX_AGE_MS (a minute), as in the TypeScript and C# SDKs. A
# deployment that shortens that passes a smaller record_within_ms.
const DEFAULT_RECORD_WITHIN_MS = 20000


var _transport  # api_transport.gd: edge calls go through its request(), sent once
var _record: FuncRef  # measurement JSON text -> coroutine answering the API's answer


func _init(transport, record: FuncRef) -> void:
	_transport = transport
	_record = record


# "" when samples is from 1 to MAX_SAMPLES, else why not.
static func samples_problem(samples: int) -> String:
	if samples >= 1 and samples <= MAX_SAMPLES:
		return ""
	return "samples must be from 1 to %d (the most the API keeps per region), not %d" % [MAX_SAMPLES, samples]


# "" when record_within_ms is positive, else why not (with 0 or less every chain would be one sample).
static func record_within_problem(record_within_ms: int) -> String:
	if record_within_ms > 0:
		return ""
	return "record_within_ms must be a positive number of milliseconds, not %d" % record_within_ms


# `samples` measurements (samples and record_within_ms checked by the caller, player_client.gd's
# probe), handed to record after each chain, with no sample on the wire: a recording's answer
# arriving mid-sample would delay the client's turnaround, which is inside the RTT. Answers record's
# last answer. A measurement expires (PROBE_MEASUREMENT_MAX_AGE_MS, a minute by default): a chain
# ends once it is record_within_ms old, so none waits longer than about that before it is recorded.
# The first failure, of the edge or of record, is answered; a chain's measurements are not recorded
# after the edge failed it.
func probe(edge: String, player_id: String, region: String, samples: int, record_within_ms: int) -> Dictionary:
	var identity = "\"playerId\":%s,\"region\":%s" % [to_json(player_id), to_json(region)]
	var base = edge.rstrip("/") + "/v1/probe/"
	var last = null
	var edge_has_rounds = true
	var taken = 0
	while taken < samples:
		var chain = yield(_measure_chain(base, identity, samples - taken, record_within_ms, edge_has_rounds), "completed")
		if not chain.ok:
			return chain
		edge_has_rounds = chain.edge_has_rounds
		taken += chain.measurements.size()
		for measurement in chain.measurements:
			last = yield(_record.call_func(measurement), "completed")
			if not last.ok:
				return last
	return last


# Up to `wanted` measurements in one chain: a challenge, then rounds (each answers the last challenge
# and brings the next), the last a plain answer, so n samples in n + 1 requests. The chain ends
# early, with a plain answer, once it is record_within_ms old. An edge without rounds (404) gives
# none here: the refused round's challenge is a round trip old, and answered it would read long; the
# chains after that are a challenge and an answer each. Answers {ok, measurements, edge_has_rounds}
# or the edge's failure.
func _measure_chain(base: String, identity: String, wanted: int, record_within_ms: int, edge_has_rounds: bool) -> Dictionary:
	var started_ms = OS.get_ticks_msec()
	var measurements = []
	var issued = yield(_transport.request(HTTPClient.METHOD_POST, base + "challenges", [], "{" + identity + "}"), "completed")
	if not issued.ok:
		return issued
	var challenge: String = issued.text
	var chained = true
	while chained:
		var body = answer_body(identity, challenge)
		chained = edge_has_rounds and measurements.size() < wanted - 1 and OS.get_ticks_msec() - started_ms < record_within_ms
		var answered = yield(_transport.request(HTTPClient.METHOD_POST, base + ("rounds" if chained else "answers"), [], body), "completed")
		if chained and answered.status == 404:
			return {"ok": true, "measurements": measurements, "edge_has_rounds": false}
		if not answered.ok:
			return answered
		if not chained:
			measurements.append(answered.text.strip_edges())
		else:
			var measurement = raw_member(answered.text, "measurement")
			challenge = raw_member(answered.text, "challenge")
			if measurement == "" or challenge == "":
				return ApiTransport.failure(answered.status, "UNPARSABLE_ANSWER", "the edge's round has no measurement and challenge: " + answered.text, null)
			measurements.append(measurement)
	return {"ok": true, "measurements": measurements, "edge_has_rounds": edge_has_rounds}


# The challenge goes back byte for byte: it is opaque to the client, and not re-serialising it
# keeps the client's turnaround (inside the RTT) short.
static func answer_body(identity: String, challenge: String) -> String:
	return "{" + identity + ",\"challenge\":" + challenge.strip_edges() + "}"


# The text of a top-level member's value in a JSON object, as written, or "": a round's measurement
# and next challenge are passed on without a parse and re-serialisation (Godot's JSON reads every
# number as a float, and issuedAtUs needs all its digits).
static func raw_member(json: String, key: String) -> String:
	var wanted = to_json(key)
	var depth = 0
	var i = 0
	while i < json.length():
		var c = json[i]
		if c == "{" or c == "[":
			depth += 1
		elif c == "}" or c == "]":
			depth -= 1
		elif c == "\"":
			var end = _string_end(json, i)
			if end < 0:
				return ""
			var colon = _skip_space(json, end)
			if depth == 1 and colon < json.length() and json[colon] == ":" and json.substr(i, end - i) == wanted:
				var start = _skip_space(json, colon + 1)
				return json.substr(start, _value_end(json, start) - start)
			i = end - 1
		i += 1
	return ""


# The index just past the string literal opening at `start`, or -1.
static func _string_end(json: String, start: int) -> int:
	var i = json.find("\"", start + 1)
	while i >= 0:
		var backslashes = 0
		while json[i - 1 - backslashes] == "\\":
			backslashes += 1
		if backslashes % 2 == 0:
			return i + 1
		i = json.find("\"", i + 1)
	return -1


static func _skip_space(json: String, i: int) -> int:
	while i < json.length() and json[i] in [" ", "\t", "\n", "\r"]:
		i += 1
	return i


# The index just past the value starting at `start`.
static func _value_end(json: String, start: int) -> int:
	var depth = 0
	var i = start
	while i < json.length():
		var c = json[i]
		if c == "\"":
			var end = _string_end(json, i)
			if end < 0:
				return json.length()
			if depth == 0:
				return end
			i = end - 1
		elif c == "{" or c == "[":
			depth += 1
		elif c == "}" or c == "]":
			if depth == 0:
				return i
			depth -= 1
			if depth == 0:
				return i + 1
		elif depth == 0 and (c == "," or c in [" ", "\t", "\n", "\r"]):
			return i
		i += 1
	return json.length()
