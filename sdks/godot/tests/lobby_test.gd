# The player client's lobby, block-list, avoid-list, ready-check and party-queue calls against a scripted API
# (tests/stand_in_api.gd): each route's method, path and body, which calls carry an
# Idempotency-Key and which are retried, a member's wait for the start, the lobby's teams read from
# teamSizes, refusals as {ok: false, code}. Run headless:
#   godot3-server --path sdks/godot -s tests/lobby_test.gd
# Prints each failed check and "godot-lobbies: N passed, M failed" last.
extends "res://tests/checks.gd"

const PlayerClient = preload("res://addons/matchplane/player_client.gd")
const LobbyCalls = preload("res://addons/matchplane/lobby_calls.gd")
const StandInApi = preload("res://tests/stand_in_api.gd")
const MATCH_ID = "0b0e8b5c-0000-4000-8000-000000000001"

var api = StandInApi.new()
var sections_done = 0  # a script error ends a section silently: each one counts its end


func _initialize() -> void:
	root.add_child(api)
	check(api.listen() > 0, "the stand-in API listens")
	if api.port > 0:
		yield(lobby_tests(), "completed")
		yield(block_and_ready_check_tests(), "completed")
		yield(avoid_list_tests(), "completed")
		yield(party_queue_tests(), "completed")
		check_equal(sections_done, 4, "every section ran to its end")
	team_tests()
	api.queue_free()
	report("godot-lobbies")


# A signed-in client against the reset stand-in, retrying after 10-20 ms.
func signed_in_client():
	api.reset()
	var client = PlayerClient.new(api.url())
	client.session_token = "tok-1"
	client.player_id = "p-1"
	client.transport().base_delay_ms = 20
	root.add_child(client)
	yield(self, "idle_frame")
	return client


func lobby(state := "OPEN", members := [{"playerId": "p-1", "joinedAt": "t"}]) -> Dictionary:
	return {"lobbyId": "l-1", "ownerId": "p-1", "mode": "hunt", "size": 5, "teamCount": 2, "teamSize": 4, "teamSizes": [4, 1],
		"ranked": false, "state": state, "members": members, "expiresAt": "t"}


func lobby_tests():
	var client = yield(signed_in_client(), "completed")
	var lobbies = client.lobbies
	var created_lobby = lobby()
	created_lobby.inviteCode = "LOB-1"
	api.answer("POST /v1/lobbies", 503, {"code": "UNAVAILABLE"})
	api.answer("POST /v1/lobbies", 201, created_lobby)
	var created = yield(lobbies.create_lobby("hunt", {"size": 5, "region": "eu-west", "ranked": true}), "completed")
	var sent = api.find("POST /v1/lobbies")
	check(created.ok and created.body.inviteCode == "LOB-1", "create_lobby answers the invite code", str(created))
	check(sent.size() == 2 and sent[0].body == "{\"mode\":\"hunt\",\"ranked\":true,\"region\":\"eu-west\",\"size\":5}",
		"create_lobby sends the mode, size, region and ranked", str(sent))
	check(sent.size() == 2 and sent[0].headers.has("idempotency-key") and sent[1].headers.get("idempotency-key") == sent[0].headers["idempotency-key"]
		and sent[0].headers.get("authorization") == "Bearer tok-1", "create_lobby is retried with one Idempotency-Key and the session token")
	yield(lobbies.create_lobby("duel"), "completed")
	check_equal(api.find("POST /v1/lobbies")[2].body, "{\"mode\":\"duel\"}", "options left out are not sent")

	api.answer("POST /v1/lobbies/join", 502, {"code": "BAD_GATEWAY"})
	api.answer("POST /v1/lobbies/join", 200, lobby())
	var joined = yield(lobbies.join_lobby("LOB-1"), "completed")
	sent = api.find("POST /v1/lobbies/join")
	check(joined.ok and sent.size() == 2 and sent[0].body == "{\"inviteCode\":\"LOB-1\"}" and not sent[0].headers.has("idempotency-key"),
		"join_lobby sends the invite code and is retried without a key", str(sent))

	api.answer("POST /v1/lobbies/current/kick", 503, {"code": "UNAVAILABLE"})
	var kicked = yield(lobbies.kick("p-2"), "completed")
	sent = api.find("POST /v1/lobbies/current/kick")
	check(not kicked.ok and sent.size() == 1 and sent[0].body == "{\"playerId\":\"p-2\"}", "kick sends the player once", str(sent))

	api.answer("POST /v1/lobbies/current/teams", 500, {"code": "INTERNAL"})
	api.answer("POST /v1/lobbies/current/teams", 200, lobby())
	var arranged = yield(lobbies.set_teams([["p-1", "p-3"], ["p-2"]]), "completed")
	sent = api.find("POST /v1/lobbies/current/teams")
	check(arranged.ok and sent.size() == 2 and sent[0].body == "{\"teams\":[[\"p-1\",\"p-3\"],[\"p-2\"]]}", "set_teams sends the teams and is retried", str(sent))

	api.answer("POST /v1/lobbies/current/start", 409, {"code": "LOBBY_TEAMS_INVALID", "detail": "team 1 holds 2 players, its size is 1"})
	var refused = yield(lobbies.start(), "completed")
	check(not refused.ok and refused.code == "LOBBY_TEAMS_INVALID" and refused.message.find("size is 1") >= 0, "a refused start answers the code", str(refused))
	api.reset()
	api.answer("POST /v1/lobbies/current/start", 503, {"code": "UNAVAILABLE"})
	yield(lobbies.start(), "completed")
	check_equal(api.find("POST /v1/lobbies/current/start").size(), 1, "start is sent once (a repeat of a start that went through is refused)")

	var started_members = [{"playerId": "p-0", "joinedAt": "t", "ticketId": "t-0"}, {"playerId": "p-1", "joinedAt": "t", "ticketId": "t-1"}]
	var started = lobby("STARTED", started_members)
	started.matchId = MATCH_ID
	api.answer("GET /v1/lobbies/current", 200, lobby())
	api.answer("GET /v1/lobbies/current", 200, started)
	var own = yield(lobbies.wait_for_start(5000, 20), "completed")
	check(own.ok and own.body.ticketId == "t-1" and own.body.matchId == MATCH_ID, "wait_for_start answers this member's ticket and the match", str(own))
	check_equal(api.find("GET /v1/lobbies/current").size(), 2, "wait_for_start polls until the lobby is started")

	api.answer("POST /v1/lobbies/current/leave", 503, {"code": "UNAVAILABLE"})
	var left = yield(lobbies.leave_lobby(), "completed")
	check(not left.ok and api.find("POST /v1/lobbies/current/leave").size() == 1, "leave_lobby is sent once", str(left))
	api.reset()
	api.answer("POST /v1/lobbies/current/leave", 204, "")
	left = yield(lobbies.leave_lobby(), "completed")
	check(left.ok and left.status == 204, "leave_lobby answers 204", str(left))
	api.answer("GET /v1/lobbies/current", 404, {"code": "LOBBY_NOT_FOUND"})
	var gone = yield(lobbies.wait_for_start(5000, 20), "completed")
	check(not gone.ok and gone.code == "LOBBY_NOT_FOUND", "wait_for_start stops when the player is in no lobby", str(gone))
	client.queue_free()
	sections_done += 1


func block_and_ready_check_tests():
	var client = yield(signed_in_client(), "completed")
	var listed = {"blocked": [{"playerId": "p-9", "blockedAt": "t"}], "maxEntries": 100}
	api.answer("PUT /v1/blocks/p-9", 503, {"code": "UNAVAILABLE"})
	api.answer("PUT /v1/blocks/p-9", 200, listed)
	var blocked = yield(client.block_player("p-9"), "completed")
	var sent = api.find("PUT /v1/blocks/p-9")
	check(blocked.ok and blocked.body.blocked[0].playerId == "p-9" and sent.size() == 2 and not sent[0].headers.has("idempotency-key"),
		"block_player PUTs the player and is retried without a key", str(sent))
	api.answer("GET /v1/blocks", 200, listed)
	var list = yield(client.block_list(), "completed")
	check(list.ok and list.body.maxEntries == 100.0, "block_list answers the list", str(list))
	api.answer("DELETE /v1/blocks/p-9", 200, {"blocked": [], "maxEntries": 100})
	var unblocked = yield(client.unblock_player("p-9"), "completed")
	check(unblocked.ok and unblocked.body.blocked.empty() and api.find("DELETE /v1/blocks/p-9").size() == 1, "unblock_player DELETEs the player", str(unblocked))
	api.answer("PUT /v1/blocks/p-8", 409, {"code": "BLOCK_LIST_FULL"})
	var full = yield(client.block_player("p-8"), "completed")
	check(not full.ok and full.code == "BLOCK_LIST_FULL" and api.find("PUT /v1/blocks/p-8").size() == 1, "a full list is refused, not retried", str(full))

	var accept_route = "POST /v1/matches/%s/accept" % MATCH_ID
	api.answer(accept_route, 0)  # the answer is lost: accepting again is safe
	api.answer(accept_route, 200, {"matchId": MATCH_ID, "answer": "ACCEPTED", "matchState": "ALLOCATING"})
	var accepted = yield(client.accept_match(MATCH_ID), "completed")
	sent = api.find(accept_route)
	check(accepted.ok and accepted.body.matchState == "ALLOCATING" and sent.size() == 2 and not sent[0].headers.has("idempotency-key"),
		"accept_match is retried after a lost answer, without a key", str(sent))
	var decline_route = "POST /v1/matches/%s/decline" % MATCH_ID
	api.answer(decline_route, 409, {"code": "NOT_AWAITING_ACCEPTANCE", "matchState": "ALLOCATING"})
	var declined = yield(client.decline_match(MATCH_ID), "completed")
	check(not declined.ok and declined.code == "NOT_AWAITING_ACCEPTANCE" and declined.problem.matchState == "ALLOCATING",
		"a ready check that moved on answers NOT_AWAITING_ACCEPTANCE with the match's state", str(declined))
	client.queue_free()
	sections_done += 1


func avoid_list_tests():
	var client = yield(signed_in_client(), "completed")
	var listed = {"avoided": [{"playerId": "p-9", "avoidedAt": "t"}], "maxEntries": 50}
	api.answer("PUT /v1/avoids/p-9", 503, {"code": "UNAVAILABLE"})
	api.answer("PUT /v1/avoids/p-9", 200, listed)
	var avoided = yield(client.avoid_player("p-9"), "completed")
	var sent = api.find("PUT /v1/avoids/p-9")
	check(avoided.ok and avoided.body.avoided[0].playerId == "p-9" and sent.size() == 2 and not sent[0].headers.has("idempotency-key")
		and sent[1].headers.get("authorization") == "Bearer tok-1", "avoid_player PUTs the player and is retried without a key", str(sent))
	api.answer("GET /v1/avoids", 200, listed)
	var list = yield(client.avoid_list(), "completed")
	check(list.ok and list.body.maxEntries == 50.0 and list.body.avoided[0].avoidedAt == "t" and api.find("GET /v1/avoids").size() == 1,
		"avoid_list answers the list", str(list))
	api.answer("DELETE /v1/avoids/p-9", 200, {"avoided": [], "maxEntries": 50})
	var removed = yield(client.unavoid_player("p-9"), "completed")
	check(removed.ok and removed.body.avoided.empty() and api.find("DELETE /v1/avoids/p-9").size() == 1, "unavoid_player DELETEs the player", str(removed))
	var refusals = [["p-1", 400, "VALIDATION_FAILED", "avoiding itself"], ["p-7", 404, "PLAYER_NOT_FOUND", "an unknown player"],
		["p-8", 409, "AVOID_LIST_FULL", "a full list"]]
	for refusal in refusals:
		var route = "PUT /v1/avoids/" + refusal[0]
		api.answer(route, refusal[1], {"code": refusal[2], "detail": "refused " + refusal[0]})
		var refused = yield(client.avoid_player(refusal[0]), "completed")
		check(not refused.ok and refused.status == refusal[1] and refused.code == refusal[2] and api.find(route).size() == 1,
			"%s is refused with %d %s, not retried" % [refusal[3], refusal[1], refusal[2]], str(refused))
	client.queue_free()
	sections_done += 1


func party_queue_tests():
	var client = yield(signed_in_client(), "completed")
	api.answer("POST /v1/queue/party-tickets", 201, {"partyTicketId": "pt-1", "partyId": "pa-1", "mode": "roles", "tickets": []})
	var roles = {"p-1": ["tank"], "p-2": ["healer", "dps"]}
	var queued = yield(client.enqueue_party("roles", {"buildVersion": "1.5.0"}, roles), "completed")
	var sent = api.find("POST /v1/queue/party-tickets")
	check(queued.ok and sent.size() == 1 and sent[0].body == to_json({"mode": "roles", "attributes": {"buildVersion": "1.5.0"}, "memberRoles": roles}),
		"enqueue_party sends the attributes and each member's roles", str(sent))
	yield(client.enqueue_party("pair"), "completed")
	check_equal(api.find("POST /v1/queue/party-tickets")[1].body, "{\"mode\":\"pair\"}", "a party queued with the mode alone sends nothing else")
	client.queue_free()
	sections_done += 1


# The teams of a lobby answer, read from teamSizes (hunt:4+1) or, without it, teamSize x teamCount.
func team_tests() -> void:
	var placed = lobby("OPEN", [{"playerId": "p-1", "team": 1.0}, {"playerId": "p-2", "team": 0.0}, {"playerId": "p-3"}, {"playerId": "p-4", "team": 0.0}])
	check_equal(LobbyCalls.team_sizes(placed), [4, 1], "team_sizes reads each team's size in order")
	var teams = LobbyCalls.members_by_team(placed)
	check(teams.teams == [["p-2", "p-4"], ["p-1"]] and teams.unplaced == ["p-3"], "members_by_team groups the members by team, the unplaced apart", str(teams))
	var even = {"teamCount": 2.0, "teamSize": 3.0, "members": []}
	check_equal(LobbyCalls.team_sizes(even), [3, 3], "an answer without teamSizes has teamCount teams of teamSize")
