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


# One measurement's hand-over to the API, in flight or done (answer: record's answer).
class Recording:
	signal finished
	var done := false
	var answer = null


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


# `samples` (checked by the caller) measurements, each handed to record as it arrives, once the next
# answer is on its way (a measurement expires: PROBE_MEASUREMENT_MAX_AGE_MS, a minute by default);
# answers record's last answer. Taken in chains: a challenge, then rounds (each answers the last
# challenge and brings the next), the last a plain answer, so `samples` + 1 requests while the API
# keeps up. A chain ends early (a plain answer, the recording awaited, a fresh challenge) when the
# previous measurement is still being recorded, so none waits behind more than one recording. An
# edge without rounds (404) is probed a fresh challenge and an answer at a time. The first refusal,
# of the edge or of record, is answered; a recording under way is awaited first.
func probe(edge: String, player_id: String, region: String, samples: int) -> Dictionary:
	var identity = "\"playerId\":%s,\"region\":%s" % [to_json(player_id), to_json(region)]
	var base = edge.rstrip("/") + "/v1/probe/"
	var recording = null
	var edge_has_rounds = true
	var taken = 0
	while taken < samples:
		if recording != null:
			if not recording.done:
				yield(recording, "finished")
			if not recording.answer.ok:
				return recording.answer
		var issued = yield(_transport.request(HTTPClient.METHOD_POST, base + "challenges", [], "{" + identity + "}"), "completed")
		if not issued.ok:
			return issued
		var challenge: String = issued.text
		var unrecorded := ""
		while true:
			var body = answer_body(identity, challenge)
			var chained = edge_has_rounds and taken < samples - 1 and (recording == null or (recording.done and recording.answer.ok))
			var reply = _transport.request(HTTPClient.METHOD_POST, base + ("rounds" if chained else "answers"), [], body)
			if unrecorded != "":
				recording = _record_after(recording, unrecorded)
			var answered = yield(reply, "completed")
			if chained and answered.status == 404:
				# An edge from before rounds. The challenge is a round trip old by now, so it is
				# dropped rather than answered late.
				edge_has_rounds = false
				break
			if answered.ok and chained:
				unrecorded = raw_member(answered.text, "measurement")
				challenge = raw_member(answered.text, "challenge")
				if unrecorded == "" or challenge == "":
					answered = ApiTransport.failure(answered.status, "UNPARSABLE_ANSWER", "the edge's round has no measurement and challenge: " + answered.text, null)
			if not answered.ok:
				if recording != null and not recording.done:
					yield(recording, "finished")
				return answered
			taken += 1
			if not chained:
				recording = _record_after(recording, answered.text.strip_edges())
				break
	if not recording.done:
		yield(recording, "finished")
	return recording.answer


# One recording at a time, in arrival order; after a refusal nothing more is sent.
func _record_after(previous, measurement: String) -> Recording:
	var recording = Recording.new()
	_run_recording(previous, measurement, recording)
	return recording


func _run_recording(previous, measurement: String, recording: Recording) -> void:
	if previous != null and not previous.done:
		yield(previous, "finished")
	if previous != null and not previous.answer.ok:
		recording.answer = previous.answer
	else:
		recording.answer = yield(_record.call_func(measurement), "completed")
	recording.done = true
	recording.emit_signal("finished")


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
