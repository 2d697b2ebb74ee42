# The API replicas a client may talk to, in order of preference (the TypeScript SDK's ApiEndpoints,
# libs/sdk api-endpoints.ts). Every replica serves the same state (PostgreSQL and Redis are
# shared), so when one stops answering the client moves to the next and carries on: mutations keep
# their Idempotency-Key, and notifications resume from the last revision seen. A player client
# shares one list between its HTTP calls and its notification socket, so a replica found dead by
# one is left by both.
extends Reference

var urls := []  # base URLs without a trailing slash, e.g. "https://mm-1.example.com"
var index := 0


# base_urls: one base URL (a String, also "a,b" for several) or an Array of them.
func _init(base_urls) -> void:
	var list = base_urls.split(",", false) if typeof(base_urls) == TYPE_STRING else base_urls
	for url in list:
		url = str(url).strip_edges().rstrip("/")
		if url != "":
			urls.append(url)
	if urls.empty():
		# Said at once, as the TypeScript SDK does: a client without a replica can do nothing.
		push_error("at least one API base URL is required")


func size() -> int:
	return urls.size()


# The replica to use now.
func current() -> String:
	return urls[index]


# The current replica's URL with the API's /v1/ prefix.
func api_url() -> String:
	return current() + "/v1/"


# `failed` did not answer: the next replica becomes current, unless another call already moved on
# from it (so a burst of failures against one replica moves the list once, not once each).
func failover(failed: String) -> void:
	if urls[index] != failed:
		return
	index = (index + 1) % urls.size()


# A 502/503/504 or no answer at all: the replica, not the request, is the trouble, so the next
# attempt goes to another one.
static func replica_unavailable(answer: Dictionary) -> bool:
	if answer.ok:
		return false
	return answer.code == "TRANSPORT_ERROR" or answer.status in [502, 503, 504]
