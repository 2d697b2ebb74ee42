# One match played to COMPLETED by two GDScript players against the real stack (sdks/run-tests.sh
# "godot-live", through test/sdk-live/godot-live.spec.ts, which starts the stack): guest sessions
# (through a first API replica that is down: --api lists it before the real one, and the client
# fails over), probes at the region's edge, the queue with the ticket heartbeat loop, the match learnt from the
# notification socket (its idle limit from the server's announced interval), the assignment (its
# join token verified with the GDScript verifier), the game server joined with it, player a's
# connection dropped mid-game and rejoined (match_play.gd: the server reports it LEFT, then
# REJOINED), the game's end and the ticket's. With --party (godot-party-live), four players play a
# 2x2 mode: a leads a party b joins with its invite code, a queues the party (one ticket each),
# c and d queue alone; a and b must share a team. With --ready-check the match waits
# AWAITING_ACCEPTANCE until each player accepted it when its socket announced the ready check.
# With --lobby, a and b first go through a lobby and a's block and avoid lists (live/lobby_steps.gd).
# Prints each failed check and
# "<suite>: N passed, M failed" last (--suite, default godot-live); exits non-zero on any failure.
# Run headless:
#   godot3-server --path sdks/godot -s live/live_journey.gd --api=<url>[,<url>...] --keys=<join key file> [--mode=duel] [--party] [--ready-check] [--lobby]
extends "res://tests/checks.gd"

const PlayerClient = preload("res://addons/matchplane/player_client.gd")
const JoinAuth = preload("res://addons/matchplane/join_auth.gd")
const ApiTransport = preload("res://addons/matchplane/api_transport.gd")
const LobbySteps = preload("res://live/lobby_steps.gd")
const HAPPY_PATH = ["ALLOCATING", "PROCESS_READY", "ASSIGNMENT_READY", "IN_PROGRESS", "COMPLETED"]
# Player a's drop and rejoin, each a match.presence_changed event (revisions 5 and 6).
const PRESENCE_EVENTS = 2
const REJOINING_PLAYER = "a"
const STEP_TIMEOUT_MS = 60000

var outcomes = {}
var invite_code := ""  # the leader's, handed to the member (as a player would by chat)
var party_ids = {}  # the party's player ids, by name
var lobby_steps = LobbySteps.new(self)

signal player_done


func arg(name: String, default := "") -> String:
	for given in OS.get_cmdline_args():
		if given.begins_with("--%s=" % name):
			return given.substr(name.length() + 3, given.length())
	return default


func _initialize() -> void:
	# Sleeps between frames instead of spinning: the machine is shared.
	OS.low_processor_usage_mode = true
	OS.low_processor_usage_mode_sleep_usec = 2000
	_main()


func _main() -> void:
	var api = arg("api")
	var verifier = JoinAuth.new()
	var keys = JoinAuth.load_key_file(arg("keys"))
	var problem = verifier.set_keys(keys)
	check(api != "" and problem == "", "the journey has an API and join keys", problem)
	if api != "" and problem == "":
		var mode = arg("mode", "duel")
		var names = ["a", "b", "c", "d"] if party() else ["a", "b"]
		for name in names:
			_play(api, mode, name)
		while outcomes.size() < names.size():
			yield(self, "player_done")
		compare(names, verifier)
	report(arg("suite", "godot-live"))


func party() -> bool:
	return flag("party")


func flag(name: String) -> bool:
	return "--" + name in OS.get_cmdline_args()


# The match's states in order: with a ready check, it waits AWAITING_ACCEPTANCE first.
func expected_states() -> Array:
	return (["AWAITING_ACCEPTANCE"] if flag("ready-check") else []) + HAPPY_PATH


func compare(names: Array, verifier) -> void:
	for name in names:
		if not outcomes[name]:
			check(false, "every player finishes its journey", name)
			return
	var a = outcomes.a
	var teams = {}
	for name in names:
		var player = outcomes[name]
		check(player.matchId == a.matchId, name + " is in the one match", "%s / %s" % [player.matchId, a.matchId])
		check(player.assignment.endpoint == a.assignment.endpoint, name + " joins the one game server")
		check(player.winningTeam == a.winningTeam, name + " is told the same winner")
		teams[name] = int(player.assignment.team)
	if party():
		check(teams.a == teams.b and teams.c == teams.d and teams.a != teams.c, "the party shares a team, the solo players the other", str(teams))
		check(party_ids.size() == 2, "the party's members both queued through it", str(party_ids))
	else:
		check(teams.a != teams.b, "each player has a team of the duel", str(teams))
	for name in names:
		var player = outcomes[name]
		var expect = {"serverId": player.assignment.serverId, "matchId": player.matchId, "now": OS.get_unix_time() * 1000}
		var verified = verifier.verify(player.assignment.joinToken, expect)
		check(verified.ok, "the join token verifies with the GDScript verifier", verified.reason + " " + verified.message)
		check(verified.ok and verified.claims.playerId == player.playerId, "the join token is the player's own")


func _play(api: String, mode: String, name: String) -> void:
	var client = PlayerClient.new(api)
	root.add_child(client)
	var outcome = yield(_journey(client, mode, name), "completed")
	if client.session_token != "":
		var ended = yield(client.end_session(), "completed")
		check(ended.ok, name + " signs out", ended.get("message", ""))
	outcomes[name] = outcome if outcome else {}
	emit_signal("player_done")


# Answers what the player saw, or {} when a step failed (already reported).
func _journey(client, mode: String, name: String) -> Dictionary:
	var session = yield(client.create_session(), "completed")
	check(session.ok and client.session_token != "", name + " signs in as a guest", session.get("message", ""))
	if not session.ok:
		return {}
	var replicas = arg("api").split(",")
	if replicas.size() > 1:
		check(session.unanswered == 1 and client.api_url() == replicas[replicas.size() - 1].rstrip("/") + "/v1/",
			name + "'s client fails over from the replica that is down to the one that answers", "%d unanswered, at %s" % [session.unanswered, client.api_url()])
	var probe_paths = []
	client.transport().connect("request_sent", self, "_collect_probe_path", [probe_paths])
	var probed = yield(client.probe_all(["eu-west"]), "completed")
	client.transport().disconnect("request_sent", self, "_collect_probe_path")
	check(probed.failed.empty(), name + " probes eu-west", str(probed.failed))
	check(PlayerClient.http_edge_of(client.last_queue_options, "eu-west") != "", name + " is offered eu-west's probe edge")
	var measured = probed.measured.get("eu-west", {})
	check(typeof(measured.get("estimateMs")) == TYPE_REAL, name + "'s edge measurement is accepted by the API", str(probed.measured))
	# Three samples in rounds: each answer brings the next challenge, the last a plain answer; the
	# measurements go to the API once the chain has ended, none while a sample is on the wire.
	var probe_route = PoolStringArray(probe_paths).join(",")
	check(probe_route == "challenges,rounds,rounds,answers,measurements,measurements,measurements" and measured.get("samplesMs", []).size() == 3,
		name + " takes its three samples at the edge in rounds, then records them", "%s, samples %s" % [probe_route, measured.get("samplesMs")])
	if flag("lobby"):
		yield(lobby_steps.play(client, name, mode), "completed")

	var events = []
	var socket_errors = []
	var subscription = client.subscribe()
	subscription.idle_timeout_ms = subscription.IDLE_FROM_ANNOUNCED
	subscription.connect("event", self, "_collect", [events])
	subscription.connect("failed", self, "_collect", [socket_errors])
	var ready_answers = []
	subscription.connect("ready_check", self, "_accept", [client, ready_answers])
	var journey = {}
	if yield(until(subscription, "is_ready", true), "completed"):
		# The stack's API announces its NOTIFY_HEARTBEAT_INTERVAL_MS (30 s) in `ready`.
		check_equal(subscription.idle_limit_ms(), 75000, name + "'s idle limit is 2.5 announced heartbeat intervals")
		journey = yield(_queue_and_play(client, subscription, mode, name, events), "completed")
		if flag("ready-check"):
			var accepted = ready_answers[0] if ready_answers.size() == 1 else {}
			check(accepted.get("ok") and accepted.body.answer == "ACCEPTED" and accepted.body.matchId == journey.get("matchId"),
				name + " accepts its match's ready check once, when the socket announces it", str(ready_answers))
	else:
		check(false, name + "'s notification socket becomes ready", subscription.ended)
	check(socket_errors.empty(), name + "'s socket reported no error", str(socket_errors))
	subscription.close()
	check(subscription.ended == "closed", name + "'s subscription ends when closed", subscription.ended)
	return journey


func _queue_and_play(client, subscription, mode: String, name: String, events: Array) -> Dictionary:
	var ticket_id = yield(_queue(client, mode, name), "completed")
	if ticket_id == "":
		return {}
	var loop_ends = []
	var beating = client.start_heartbeats(ticket_id)
	beating.connect("ended", self, "_collect_end", [loop_ends])

	if not (yield(until(events, "size", 1), "completed")):
		check(false, name + " hears of a match")
		return {}
	var match_id = events[0].matchId
	var assignment = yield(client.wait_for_assignment(match_id, STEP_TIMEOUT_MS), "completed")
	check(assignment.ok and assignment.body.matchId == match_id, name + "'s assignment is for the notified match", assignment.get("message", ""))
	if not assignment.ok:
		return {}
	var game = yield(_rejoining_play(client, match_id, name) if name == REJOINING_PLAYER else _plain_play(client, assignment.body, name), "completed")
	check(game.outcome == "COMPLETED" and game.winning_team != null, name + "'s game ends COMPLETED with a winner", game.outcome)
	check(game.ticks > 0, name + " saw the game's ticks")

	var expected = expected_states()
	yield(until(events, "size", expected.size() + PRESENCE_EVENTS), "completed")
	var states = []
	var presence_changes = 0
	var revisions = []
	for e in events:
		if e.matchId == match_id:
			if e.event == "match.presence_changed":
				presence_changes += 1
			else:
				states.append(e.state)
			revisions.append(e.revision)
	check(states == expected, name + " is told every state once, in order", str(states))
	check_equal(presence_changes, PRESENCE_EVENTS, name + " is told of a's leave and rejoin")
	check(revisions == range(1, expected.size() + PRESENCE_EVENTS + 1), name + " sees every revision without a gap", str(revisions))
	yield(until(loop_ends, "size", 1), "completed")
	check(loop_ends.size() == 1 and loop_ends[0] in ["left-queue", "finished"], name + "'s heartbeat loop ended by itself once the ticket left the queue", str(loop_ends))
	var ticket_state = yield(_ticket_end(client, ticket_id), "completed")
	check(ticket_state == "COMPLETED", name + "'s ticket ends COMPLETED", ticket_state)
	return {"playerId": client.player_id, "matchId": match_id, "assignment": assignment.body, "winningTeam": game.winning_team}


# Queues alone, or (with --party) a leads a party b joins and queues it; answers the player's own
# ticket id, or "" when a step failed.
func _queue(client, mode: String, name: String) -> String:
	var ticket
	if party() and name == "a":
		ticket = yield(_lead_party(client, mode), "completed")
	elif party() and name == "b":
		ticket = yield(_join_party(client), "completed")
	else:
		ticket = yield(client.create_ticket(mode), "completed")
	# A member reads its ticket once the leader queued the party: the matcher may have moved it on.
	var queued_states = ["SEARCHING", "MATCHED", "ASSIGNED"] if party() and name == "b" else ["SEARCHING"]
	check(ticket.ok and ticket.body.state in queued_states, name + " queues for " + mode, ticket.get("message", ""))
	return ticket.body.id if ticket.ok else ""


# Creates the party, waits for b, queues the party: answers a's own ticket of the party ticket.
func _lead_party(client, mode: String) -> Dictionary:
	var created = yield(client.create_party(), "completed")
	check(created.ok and typeof(created.body.get("inviteCode")) == TYPE_STRING, "a creates a party and gets its invite code", created.get("message", ""))
	if not created.ok:
		return created
	invite_code = created.body.inviteCode
	var members = 1
	var deadline = OS.get_ticks_msec() + STEP_TIMEOUT_MS
	while members < 2 and OS.get_ticks_msec() < deadline:
		yield(create_timer(0.1), "timeout")
		var current = yield(client.party(), "completed")
		members = current.body.members.size() if current.ok else 1
	var queued = yield(client.enqueue_party(mode), "completed")
	check(queued.ok and queued.body.tickets.size() == 2, "a queues the party: one ticket per member", queued.get("message", ""))
	if not queued.ok:
		return queued
	var own = null
	for ticket in queued.body.tickets:
		party_ids[ticket.playerId] = queued.body.partyTicketId
		if ticket.playerId == client.player_id:
			own = ticket
	if own != null:
		return {"ok": true, "body": own}
	return ApiTransport.failure(0, "NO_OWN_TICKET", "the party ticket holds no ticket of the leader", null)


# Joins a's party with its invite code and finds its own ticket once a queued the party.
func _join_party(client) -> Dictionary:
	var deadline = OS.get_ticks_msec() + STEP_TIMEOUT_MS
	while invite_code == "" and OS.get_ticks_msec() < deadline:
		yield(create_timer(0.05), "timeout")
	var joined = yield(client.join_party(invite_code), "completed")
	check(joined.ok and joined.body.members.size() == 2, "b joins the party with the invite code", joined.get("message", ""))
	if not joined.ok:
		return joined
	var found = yield(client.wait_for_party_ticket(STEP_TIMEOUT_MS), "completed")
	if not found.ok:
		return found
	var ticket = yield(client.ticket(found.body.ticketId), "completed")
	check(ticket.ok and typeof(ticket.body.get("partyTicketId")) == TYPE_STRING, "b's ticket is of the party ticket", ticket.get("message", ""))
	return ticket


# Joins once and plays to the end: {outcome, winning_team, ticks}.
func _plain_play(client, assignment: Dictionary, name: String) -> Dictionary:
	var game = client.join_match(assignment)
	var joined = yield(game.join(), "completed")
	check(joined.ok and joined.playerId == client.player_id, name + " joins the game server as itself", joined.get("message", ""))
	check(joined.ok and joined.team == int(assignment.team), name + " joins on its assigned team")
	yield(until(game, "close_code", 0), "completed")
	check(game.close_code == game.NORMAL, name + "'s game connection closes normally", game.close_code)
	return {"outcome": game.outcome, "winning_team": game.winning_team, "ticks": _ticks(game.messages)}


# Plays with match_play.gd, drops the connection after the first tick and is back by the end.
func _rejoining_play(client, match_id: String, name: String) -> Dictionary:
	var play = client.play_match(match_id)
	var messages = []
	var finished = []
	play.connect("message", self, "_collect", [messages])
	play.connect("finished", self, "_collect", [finished])
	var joined = yield(play.start(), "completed")
	check(joined.ok and joined.playerId == client.player_id, name + " joins the game server as itself", joined.get("message", ""))
	if not joined.ok:
		return {"outcome": "", "winning_team": null, "ticks": 0}
	var team = play.connection.team
	yield(until(messages, "size", 2), "completed")  # started, then a tick
	play.drop()
	yield(until(finished, "size", 1), "completed")
	var result = finished[0] if finished.size() > 0 else {"ok": false, "rejoins": 0}
	check(result.rejoins == 1, name + " rejoins its match once after the drop", str(result))
	check(play.connection.team == team, name + " is back on its team")
	return {"outcome": result.get("outcome", ""), "winning_team": result.get("winning_team"), "ticks": _ticks(messages)}


func _ticks(messages: Array) -> int:
	var ticks = 0
	for message in messages:
		ticks += 1 if message.type == "tick" else 0
	return ticks


func _ticket_end(client, ticket_id: String) -> String:
	var deadline = OS.get_ticks_msec() + STEP_TIMEOUT_MS
	var state = ""
	while true:
		var answer = yield(client.ticket(ticket_id), "completed")
		state = answer.body.state if answer.ok else answer.code
		if not state in ["SEARCHING", "MATCHED", "ASSIGNED", "CONNECTED"] or OS.get_ticks_msec() > deadline:
			return state
		yield(create_timer(0.2), "timeout")
	return state


# Waits until subject.property (or subject.size() for an Array) reaches at least `wanted`; answers
# whether it did within the step timeout.
func until(subject, property: String, wanted) -> bool:
	var deadline = OS.get_ticks_msec() + STEP_TIMEOUT_MS
	while true:
		yield(create_timer(0.025), "timeout")
		var value = subject.size() if typeof(subject) == TYPE_ARRAY else subject.get(property)
		if (typeof(wanted) == TYPE_BOOL and value == wanted) or (typeof(wanted) != TYPE_BOOL and value >= wanted):
			return true
		if OS.get_ticks_msec() > deadline:
			return false
	return false


# The ready check the socket announced: accepted at once (the last acceptance starts allocation).
func _accept(match_id: String, _message, client, into: Array) -> void:
	var answer = yield(client.accept_match(match_id), "completed")
	into.append(answer)


func _collect_end(why: String, _detail, into: Array) -> void:
	into.append(why)


func _collect(item, into: Array) -> void:
	into.append(item)


# The probe edge's paths a client calls (/v1/probe/...) and its recordings at the API
# (/v1/probes/measurements), in the order sent.
func _collect_probe_path(_method: int, url: String, into: Array) -> void:
	for prefix in ["/v1/probe/", "/v1/probes/"]:
		if url.find(prefix) >= 0:
			into.append(url.substr(url.find(prefix) + prefix.length(), url.length()))
