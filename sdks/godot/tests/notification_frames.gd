# What the socket tests (tests/socket_test.gd, tests/failover_test.gd) send and read: a match
# event frame of match "m", and the revisions of delivered events.
extends Reference


static func event(revision: int) -> Dictionary:
	return {"type": "event", "event": "match.state_changed", "matchId": "m", "revision": revision, "state": "S", "occurredAt": "t"}


static func revisions(delivered: Array) -> Array:
	var out = []
	for e in delivered:
		out.append(e.revision)
	return out
