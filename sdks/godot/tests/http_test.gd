# The player client's HTTP calls against a scripted API (a TCP_Server answering HTTP/1.1 on a local
# port, tests/stand_in_api.gd): the session token kept and sent, Idempotency-Keys on mutations, the
# API-hosted probe (the live journey's stack has an edge, so only here), problem+json as {ok: false,
# code}, wait_for_assignment through 409 ASSIGNMENT_NOT_READY and a match that ended, parties, and
# the retry policy (which failures are retried, the same Idempotency-Key on every retry,
# Retry-After). Run headless:
#   godot3-server --path sdks/godot -s tests/http_test.gd
# Prints each failed check and "godot-http: N passed, M failed" last.
extends "res://tests/checks.gd"

const PlayerClient = preload("res://addons/matchplane/player_client.gd")
const ApiTransport = preload("res://addons/matchplane/api_transport.gd")
const StandInApi = preload("res://tests/stand_in_api.gd")

var api = StandInApi.new()
var requests = api.requests


func _initialize() -> void:
	root.add_child(api)
	check(api.listen() > 0, "the stand-in API listens")
	if api.port > 0:
		yield(client_tests(), "completed")
		yield(party_tests(), "completed")
		yield(retry_tests(), "completed")
	retry_policy_tests()
	api.queue_free()
	report("godot-http")


func client_tests():
	var client = PlayerClient.new(api.url())
	root.add_child(client)
	answer("POST /v1/sessions", 201, {"token": "tok-1", "playerId": "p-1"})
	var session = yield(client.create_session(), "completed")
	check(session.ok and client.session_token == "tok-1" and client.player_id == "p-1", "the session's token and player are kept", str(session))
	check(not requests[0].headers.has("authorization") and requests[0].body == "{}", "signing in sends no token", str(requests[0]))

	answer("GET /v1/queue/options", 200, {"regions": ["eu-west"], "probeEdges": {}, "heartbeatIntervalMs": 5000})
	answer("POST /v1/probes/eu-west/challenge", 201, {"challengeId": "c-1", "nonce": "n-1"})
	answer("POST /v1/probes/eu-west/answer", 200, {"region": "eu-west", "estimateMs": 12})
	var probed = yield(client.probe_all(null, 2), "completed")
	check(probed.failed.empty() and probed.measured["eu-west"].estimateMs == 12.0, "a region without an edge is probed at the API", str(probed))
	var answers_sent = find("POST /v1/probes/eu-west/answer")
	check(answers_sent.size() == 2 and parse_json(answers_sent[0].body).hash() == {"challengeId": "c-1", "nonce": "n-1"}.hash(),
		"each sample answers its challenge's id and nonce", str(answers_sent))
	var challenges = find("POST /v1/probes/eu-west/challenge")
	check(challenges.size() == 2 and challenges[0].headers.get("authorization") == "Bearer tok-1", "calls carry the session token")
	check(challenges[0].headers.has("idempotency-key") and challenges[0].headers["idempotency-key"] != challenges[1].headers.get("idempotency-key"),
		"each mutation has its own Idempotency-Key")

	answer("POST /v1/queue/tickets", 409, {"type": "about:blank", "title": "Conflict", "code": "ALREADY_QUEUED", "detail": "already queued"})
	var ticket = yield(client.create_ticket("duel", {"skill": 3}), "completed")
	check(not ticket.ok and ticket.status == 409 and ticket.code == "ALREADY_QUEUED" and ticket.message == "already queued", "problem+json answers {ok: false, code, message}", str(ticket))
	var sent = find("POST /v1/queue/tickets")[0].body
	check(sent == "{\"attributes\":{\"skill\":3},\"mode\":\"duel\"}", "a ticket carries its mode and attributes", sent)

	var not_ready = {"code": "ASSIGNMENT_NOT_READY", "title": "Conflict"}
	answer("GET /v1/matches/m-1/assignment", 409, not_ready)
	answer("GET /v1/matches/m-1/assignment", 200, {"matchId": "m-1", "endpoint": "127.0.0.1:1", "joinToken": "t"})
	answer("GET /v1/matches/m-1/events?after=0", 200, {"state": "PROCESS_READY", "revision": 2, "events": []})
	var assignment = yield(client.wait_for_assignment("m-1", 5000, 20), "completed")
	check(assignment.ok and assignment.body.matchId == "m-1", "wait_for_assignment polls through ASSIGNMENT_NOT_READY", str(assignment))

	answer("GET /v1/matches/m-2/assignment", 409, not_ready)
	answer("GET /v1/matches/m-2/events?after=0", 200, {"state": "FAILED", "revision": 4, "events": []})
	var ended = yield(client.wait_for_assignment("m-2", 5000, 20), "completed")
	check(not ended.ok and ended.code == "ASSIGNMENT_UNAVAILABLE", "wait_for_assignment stops when the match has ended", str(ended))

	answer("DELETE /v1/sessions/current", 401, {"code": "UNAUTHENTICATED"})
	var signed_out = yield(client.end_session(), "completed")
	check(signed_out.ok and client.session_token == "", "a session already gone counts as ended", str(signed_out))
	client.queue_free()



func answer(route: String, status: int, body = {}, headers := []) -> void:
	api.answer(route, status, body, headers)


func find(route: String) -> Array:
	return api.find(route)


# A signed-in player client against the reset stand-in, retrying after 10-20 ms.
func signed_in_client():
	api.reset()
	var client = PlayerClient.new(api.url())
	root.add_child(client)
	client.transport().base_delay_ms = 20
	answer("POST /v1/sessions", 201, {"token": "tok-2", "playerId": "p-1"})
	yield(client.create_session(), "completed")
	return client


func party_tests():
	var client = yield(signed_in_client(), "completed")
	var party = {"partyId": "pa-1", "leaderId": "p-1", "members": [{"playerId": "p-1"}], "maxSize": 2, "inviteExpiresAt": "2026-12-07T02:00:00.000Z"}
	var created_party = party.duplicate()
	created_party.inviteCode = "INV-1"
	answer("POST /v1/parties", 201, created_party)
	var created = yield(client.create_party(), "completed")
	check(created.ok and created.body.inviteCode == "INV-1", "create_party answers the invite code", str(created))
	var sent = find("POST /v1/parties")
	check(sent.size() == 1 and sent[0].headers.has("idempotency-key") and sent[0].headers.get("authorization") == "Bearer tok-2",
		"creating a party carries an Idempotency-Key and the session token", str(sent))

	answer("POST /v1/parties/join", 200, party)
	var joined = yield(client.join_party("INV-1"), "completed")
	sent = find("POST /v1/parties/join")
	check(joined.ok and joined.body.partyId == "pa-1", "join_party answers the party", str(joined))
	check(sent.size() == 1 and sent[0].body == "{\"inviteCode\":\"INV-1\"}", "join_party sends the invite code", str(sent))

	answer("POST /v1/queue/party-tickets", 201, {"partyTicketId": "pt-1", "partyId": "pa-1", "mode": "duel", "tickets": []})
	var queued = yield(client.enqueue_party("duel"), "completed")
	sent = find("POST /v1/queue/party-tickets")
	check(queued.ok and queued.body.partyTicketId == "pt-1", "enqueue_party answers the party ticket", str(queued))
	check(sent.size() == 1 and sent[0].body == "{\"mode\":\"duel\"}" and sent[0].headers.has("idempotency-key"),
		"enqueue_party sends the mode with an Idempotency-Key", str(sent))

	var mate = {"playerId": "p-0", "ticketId": "t-0"}
	var before = party.duplicate()
	before.members = [mate, {"playerId": "p-1"}]
	var after = party.duplicate()
	after.members = [mate, {"playerId": "p-1", "ticketId": "t-1"}]
	answer("GET /v1/parties/current", 200, before)
	answer("GET /v1/parties/current", 200, after)
	var own = yield(client.wait_for_party_ticket(5000, 20), "completed")
	check(own.ok and own.body.ticketId == "t-1", "wait_for_party_ticket answers this player's own ticket", str(own))
	check_equal(find("GET /v1/parties/current").size(), 2, "wait_for_party_ticket polls until the player's ticket is there")

	answer("POST /v1/parties/current/leave", 503, {"code": "UNAVAILABLE"})
	var left = yield(client.leave_party(), "completed")
	check(not left.ok and left.status == 503, "a failed leave is answered", str(left))
	check_equal(find("POST /v1/parties/current/leave").size(), 1, "leave_party is sent once (a repeat of a leave that went through is refused)")
	answer("DELETE /v1/parties/current", 204, "")
	var disbanded = yield(client.disband_party(), "completed")
	check(disbanded.ok and disbanded.status == 204, "disband_party answers 204", str(disbanded))
	api.reset()
	answer("GET /v1/parties/current", 404, {"code": "PARTY_NOT_FOUND"})
	var none = yield(client.wait_for_party_ticket(5000, 20), "completed")
	check(not none.ok and none.code == "PARTY_NOT_FOUND", "wait_for_party_ticket stops when there is no party", str(none))
	client.queue_free()


func retry_tests():
	var client = yield(signed_in_client(), "completed")
	answer("POST /v1/queue/tickets", 503, {"code": "UNAVAILABLE"})
	answer("POST /v1/queue/tickets", 500, {"code": "INTERNAL"})
	answer("POST /v1/queue/tickets", 201, {"id": "t-1", "state": "SEARCHING"})
	var ticket = yield(client.create_ticket("duel"), "completed")
	var sent = find("POST /v1/queue/tickets")
	check(ticket.ok and ticket.body.id == "t-1", "a mutation is retried through 503 and 500", str(ticket))
	check(sent.size() == 3 and sent[0].headers.has("idempotency-key") and sent[1].headers.get("idempotency-key") == sent[0].headers["idempotency-key"]
		and sent[2].headers.get("idempotency-key") == sent[0].headers["idempotency-key"], "every retry reuses the call's Idempotency-Key", str(sent))

	answer("POST /v1/queue/tickets/t-1/heartbeat", 0)
	answer("POST /v1/queue/tickets/t-1/heartbeat", 409, {"code": "IDEMPOTENCY_KEY_IN_PROGRESS"})
	answer("POST /v1/queue/tickets/t-1/heartbeat", 200, {"id": "t-1", "state": "SEARCHING"})
	var beat = yield(client.heartbeat("t-1"), "completed")
	sent = find("POST /v1/queue/tickets/t-1/heartbeat")
	check(beat.ok and sent.size() == 3 and beat.unanswered == 1, "a dropped connection and IDEMPOTENCY_KEY_IN_PROGRESS are retried", str(beat))

	answer("GET /v1/queue/tickets/t-1", 502, {"code": "BAD_GATEWAY"})
	answer("GET /v1/queue/tickets/t-1", 200, {"id": "t-1", "state": "SEARCHING"})
	var read = yield(client.ticket("t-1"), "completed")
	sent = find("GET /v1/queue/tickets/t-1")
	check(read.ok and sent.size() == 2 and not sent[1].headers.has("idempotency-key"), "a read is retried, without a key", str(sent))

	answer("DELETE /v1/queue/tickets/t-1", 503, {"code": "UNAVAILABLE"})
	var cancelled = yield(client.cancel_ticket("t-1"), "completed")
	check(not cancelled.ok and cancelled.status == 503 and find("DELETE /v1/queue/tickets/t-1").size() == 3,
		"after `retries` retries the last failure is answered", str(cancelled))

	for refused in [[400, "VALIDATION_FAILED"], [501, "NOT_IMPLEMENTED"], [409, "ALREADY_QUEUED"], [404, "NOT_FOUND"]]:
		api.reset()
		answer("GET /v1/matches/m-9/assignment", refused[0], {"code": refused[1]})
		var failed = yield(client.assignment("m-9"), "completed")
		check(failed.code == refused[1] and find("GET /v1/matches/m-9/assignment").size() == 1, "a %d is not retried" % refused[0], str(failed))

	api.reset()
	answer("POST /v1/queue/tickets", 429, {"code": "RATE_LIMITED"}, ["Retry-After: 1"])
	answer("POST /v1/queue/tickets", 201, {"id": "t-2", "state": "SEARCHING"})
	var limited = yield(client.create_ticket("duel"), "completed")
	check(not limited.ok and limited.code == "RATE_LIMITED" and limited.retry_after_seconds == 1 and find("POST /v1/queue/tickets").size() == 1,
		"a 429 is answered with its Retry-After, not retried, by default", str(limited))
	client.transport().retry_rate_limited = true
	api.reset()
	answer("POST /v1/queue/tickets", 429, {"code": "RATE_LIMITED"}, ["Retry-After: 1"])
	answer("POST /v1/queue/tickets", 201, {"id": "t-2", "state": "SEARCHING"})
	var started = OS.get_ticks_msec()
	var waited = yield(client.create_ticket("duel"), "completed")
	sent = find("POST /v1/queue/tickets")
	check(waited.ok and sent.size() == 2 and OS.get_ticks_msec() - started >= 900, "retry_rate_limited waits out Retry-After, then retries",
		"%s after %d ms" % [str(waited), OS.get_ticks_msec() - started])
	check(sent.size() == 2 and sent[1].headers.get("idempotency-key") == sent[0].headers.get("idempotency-key"), "the retry after a 429 reuses the key")
	api.reset()
	answer("POST /v1/queue/tickets", 429, {"code": "COOLDOWN_ACTIVE"}, ["Retry-After: 600"])
	var cooling = yield(client.create_ticket("duel"), "completed")
	check(not cooling.ok and cooling.retry_after_seconds == 600 and find("POST /v1/queue/tickets").size() == 1,
		"a Retry-After past max_retry_after_ms is answered at once", str(cooling))

	api.reset()
	answer("POST /v1/probes/eu-west/challenge", 201, {"challengeId": "c-1", "nonce": "n-1"})
	answer("POST /v1/probes/eu-west/answer", 503, {"code": "UNAVAILABLE"})
	var probed = yield(client.probe("eu-west", 1), "completed")
	check(not probed.ok and find("POST /v1/probes/eu-west/answer").size() == 1, "a probe answer is sent once (a retry would time the backoff)", str(probed))
	client.queue_free()


# The retry policy alone (api_transport.gd retry_delay_ms, parse_retry_after).
func retry_policy_tests() -> void:
	var transport = ApiTransport.new("http://127.0.0.1:1")
	var dropped = ApiTransport.failure(0, "TRANSPORT_ERROR", "", null)
	var first = transport.retry_delay_ms(dropped, 0)
	var third = transport.retry_delay_ms(dropped, 2)
	check(first >= 125 and first <= 250, "the first retry waits half to all of base_delay_ms", first)
	check(third >= 500 and third <= 1000, "the backoff doubles with each retry", third)
	check(transport.retry_delay_ms(dropped, 10) <= 5000, "the backoff is capped at max_delay_ms")
	var unavailable = ApiTransport.failure(503, "UNAVAILABLE", "", null)
	unavailable.retry_after_seconds = 2
	check_equal(transport.retry_delay_ms(unavailable, 0), 2000, "a 503's Retry-After is the delay")
	check_equal(transport.retry_delay_ms({"ok": true, "status": 200}, 0), -1, "a success is not retried")
	check_equal(ApiTransport.parse_retry_after("120", 0), 120, "Retry-After in seconds")
	var at = OS.get_unix_time_from_datetime({"year": 1994, "month": 11, "day": 6, "hour": 8, "minute": 49, "second": 37})
	check_equal(ApiTransport.parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at - 10), 10, "Retry-After as an HTTP date")
	check_equal(ApiTransport.parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at + 10), 0, "a Retry-After date passed is 0")
	check_equal(ApiTransport.parse_retry_after("-5", 0), -1, "a negative Retry-After is unreadable")
	check_equal(ApiTransport.parse_retry_after("soon", 0), -1, "a word is unreadable")
	check_equal(ApiTransport.header_value(["Content-Type: x", "retry-after:  7 "], "retry-after"), "7", "headers are found by name, any case")
	transport.free()
