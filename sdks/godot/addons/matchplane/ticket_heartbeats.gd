# A queue ticket's heartbeat loop (player_client.gd start_heartbeats; the TypeScript SDK's
# PlayerClient.startHeartbeats): beats the ticket every interval after the previous beat settled
# while it is SEARCHING or MATCHED, and ends by itself once the ticket left the queue (ASSIGNED,
# CANCELLED, EXPIRED, ...) or the server no longer takes its heartbeats (404, 409 TICKET_FINISHED).
# A failed beat that ends nothing (a network error, a 5xx after the transport's retries) is
# reported and the loop goes on: the next beat is its retry. Frees itself once ended (after a
# beat in flight settled).
extends Node

const ApiTransport = preload("res://addons/matchplane/api_transport.gd")
# Ticket states that take heartbeats (DESIGN.md "Aggregates and states").
const HEARTBEAT_STATES = ["SEARCHING", "MATCHED"]
const DEFAULT_INTERVAL_MS = 10000

signal heartbeat_failed(answer)  # a beat failed; the loop goes on
# why: "stopped" (stop()), "left-queue" (detail: the ticket's body) or "finished" (detail: the
# failed answer, whose problem says how the ticket ended, e.g. EXPIRED SEARCH_TIMED_OUT).
signal ended(why, detail)

var ticket_id: String
var interval_ms := -1  # once started: the explicit one, the queue options' one, or 10 s
var beats := 0  # beats answered ok so far
var end_reason := ""

var _client: Node  # the player_client.gd whose heartbeat() and queue options this uses
var _timer := Timer.new()


# interval_ms: -1 for the heartbeatIntervalMs of the client's queue options (fetched when the
# client has none yet; 10 s when that fails).
func _init(client: Node, id: String, explicit_interval_ms := -1) -> void:
	_client = client
	ticket_id = id
	interval_ms = explicit_interval_ms
	_timer.one_shot = true
	add_child(_timer)


func _ready() -> void:
	_run()


func running() -> bool:
	return end_reason == ""


# Ends the loop; a beat in flight completes but none follows. Idempotent.
func stop() -> void:
	_finish("stopped", null)


func _run() -> void:
	if interval_ms <= 0:
		interval_ms = yield(_queue_interval_ms(), "completed")
	while running():
		_timer.start(interval_ms / 1000.0)
		yield(_timer, "timeout")
		if not running():
			break
		var answer = yield(_client.heartbeat(ticket_id), "completed")
		if not running():
			break
		if answer.ok and not str(answer.body.get("state")) in HEARTBEAT_STATES:
			_finish("left-queue", answer.body)
		elif answer.ok:
			beats += 1
		elif answer.status == 404 or (answer.status == 409 and answer.code == "TICKET_FINISHED"):
			_finish("finished", answer)
		else:
			emit_signal("heartbeat_failed", answer)
	# Freed here, not in stop(): a beat in flight resumes this coroutine once it settles.
	queue_free()


func _queue_interval_ms() -> int:
	var options = _client.last_queue_options
	if typeof(options) != TYPE_DICTIONARY:
		var answer = yield(_client.queue_options(), "completed")
		if not answer.ok:
			emit_signal("heartbeat_failed", answer)
			return DEFAULT_INTERVAL_MS
		options = answer.body
	else:
		yield(get_tree(), "idle_frame")
	var announced = ApiTransport.as_int(options.get("heartbeatIntervalMs"))
	return announced if announced > 0 else DEFAULT_INTERVAL_MS


func _finish(why: String, detail) -> void:
	if end_reason != "":
		return
	end_reason = why
	# The timer runs out (the loop then sees it ended and frees the node): a stopped timer would
	# leave the loop waiting forever.
	emit_signal("ended", why, detail)
