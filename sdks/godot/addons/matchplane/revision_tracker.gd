# The last revision delivered per match, and events held back after a gap until the server's
# replay (or a resync) fills it, so a caller sees each match's revisions once, in order, without a
# gap. Events are the notification socket's event messages as Dictionaries (revision an int).
extends Reference

var _seen = {}  # match id -> last delivered revision
var _held = {}  # match id -> events after a gap, waiting


func _init(seen_before := {}) -> void:
	for match_id in seen_before:
		_seen[match_id] = int(seen_before[match_id])


# What to send in a resume ({match id: last delivered revision}), also kept to resume a later run.
func last_seen() -> Dictionary:
	return _seen.duplicate()


# Also follows match_id from after_revision (never back before what was delivered); answers the
# revision to resume from.
func follow(match_id: String, after_revision: int) -> int:
	var from = max(_seen.get(match_id, after_revision), after_revision)
	_seen[match_id] = from
	return from


# Takes an event; answers {deliver: [events in order], resume_from: int or -1}. resume_from is set
# once per gap: the server must be asked to replay the match from there.
func accept(event: Dictionary) -> Dictionary:
	var match_id: String = event.matchId
	var revision: int = event.revision
	var deliver = []
	var known = _seen.has(match_id)
	if known and revision <= _seen[match_id]:
		return {"deliver": deliver, "resume_from": -1}
	if not known or revision == _seen[match_id] + 1:
		_seen[match_id] = revision
		deliver.append(event)
		_release(match_id, deliver)
		return {"deliver": deliver, "resume_from": -1}
	if _held.has(match_id):
		for other in _held[match_id]:
			if other.revision == revision:
				return {"deliver": deliver, "resume_from": -1}
		_held[match_id].append(event)
		return {"deliver": deliver, "resume_from": -1}
	_held[match_id] = [event]
	return {"deliver": deliver, "resume_from": _seen[match_id]}


# A resync: the match is at its revision now; answers the held events that follow on.
# BUFFER_OVERFLOW changes nothing: the server closes the socket next, and resuming from what was
# delivered replays the events.
func resync(message: Dictionary) -> Array:
	var deliver = []
	if message.reason == "BUFFER_OVERFLOW":
		return deliver
	_seen[message.matchId] = int(message.revision)
	_release(message.matchId, deliver)
	return deliver


func _release(match_id: String, deliver: Array) -> void:
	if not _held.has(match_id):
		return
	var held: Array = _held[match_id]
	held.sort_custom(self, "_before")
	while not held.empty():
		var next = held[0]
		if next.revision > _seen[match_id] + 1:
			return
		held.pop_front()
		if next.revision == _seen[match_id] + 1:
			_seen[match_id] = next.revision
			deliver.append(next)
	_held.erase(match_id)


func _before(a: Dictionary, b: Dictionary) -> bool:
	return a.revision < b.revision
