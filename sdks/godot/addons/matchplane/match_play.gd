# A player's play of its match that survives a dropped game connection (the TypeScript SDK's
# MatchPlay): when the connection closes before the server's `ended`, it fetches the assignment
# again (which carries a freshly signed join token once the game server reported the player LEFT)
# and rejoins, to the same team, until the match ends. It gives up when the match is over (410
# MATCH_ENDED, 404), when the server refuses the player for good (4410: abandoned, past the grace
# window) or after rejoin_window_ms without a connection. Made by player_client.gd play_match.
extends Node

const GameConnection = preload("res://addons/matchplane/game_connection.gd")

signal message(message)  # every message after joined, across rejoins, in order
signal rejoined(connection)  # the connection dropped and the player is back in the match
# {ok: true, outcome, winning_team, rejoins} on the server's ended; {ok: false, code, message,
# rejoins} when the player could not get back in (or stop() was called).
signal finished(result)

var match_id: String
var connection: Node = null  # the game_connection.gd in use now (a new one after each rejoin)
var rejoins := 0
var result = null  # once finished
var retry_delay_ms := 500  # pause between rejoin attempts
var rejoin_window_ms := 120000  # give up after this long without a connection

var _client: Node  # player_client.gd: assignment() and join_match()
var _stopped := false


func _init(client: Node, id: String) -> void:
	_client = client
	match_id = id


# Fetches the assignment and joins: {ok: true, playerId, team} or the failed answer (the
# assignment's problem+json, or the join's {ok: false, code, message}). Once joined, the play
# goes on by itself until "finished".
func start() -> Dictionary:
	var joined = yield(_join(), "completed")
	return joined


# Drops the game connection as a network loss would (for demos and tests): play goes on.
func drop() -> void:
	if connection != null:
		connection.leave(4000, "connection dropped")


# Stops playing: closes the connection and rejoins no more.
func stop() -> void:
	_stopped = true
	if connection != null:
		connection.leave()
	_finish({"ok": false, "code": "STOPPED", "message": "play of match %s was stopped" % match_id})


func _join() -> Dictionary:
	var assignment = yield(_client.assignment(match_id), "completed")
	if not assignment.ok:
		return assignment
	var next = _client.join_match(assignment.body)
	var joined = yield(next.join(), "completed")
	if not joined.ok:
		next.queue_free()
		return joined
	if connection != null:
		connection.queue_free()
	connection = next
	next.connect("message", self, "_on_message")
	next.connect("closed", self, "_on_closed", [next])
	return joined


func _on_message(received: Dictionary) -> void:
	emit_signal("message", received)


func _on_closed(code: int, closed_connection: Node) -> void:
	if closed_connection != connection or result != null:
		return
	if closed_connection.outcome != "":
		_finish({"ok": true, "outcome": closed_connection.outcome, "winning_team": closed_connection.winning_team})
	elif code == GameConnection.JOINING_CLOSED or _stopped:
		_finish({"ok": false, "code": code, "message": "the game server sent the player away (%d)" % code})
	else:
		_rejoin()


func _rejoin() -> void:
	var deadline = OS.get_ticks_msec() + rejoin_window_ms
	var last = {"ok": false, "code": "REJOIN_TIMEOUT", "message": "could not rejoin match " + match_id}
	while not _stopped and OS.get_ticks_msec() < deadline:
		var joined = yield(_join(), "completed")
		if _stopped:
			return
		if joined.ok:
			rejoins += 1
			emit_signal("rejoined", connection)
			return
		if _is_final(joined):
			_finish(joined)
			return
		last = joined
		yield(get_tree().create_timer(retry_delay_ms / 1000.0), "timeout")
	_finish(last)


# The match is over for this player: no point trying again.
static func _is_final(answer: Dictionary) -> bool:
	if answer.has("status"):
		return answer.status in [404, 410]
	return answer.get("code") == GameConnection.JOINING_CLOSED


func _finish(outcome: Dictionary) -> void:
	if result != null:
		return
	outcome.rejoins = rejoins
	result = outcome
	emit_signal("finished", outcome)
