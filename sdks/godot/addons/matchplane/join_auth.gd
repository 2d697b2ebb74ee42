# Offline verifier of Matchplane join tokens and roster manifests for Godot 3 game servers.
# Byte layouts: docs/JOIN-AUTH.md; test/fixtures/join-auth-vectors.json is their specification
# and tests/vectors_test.gd holds this script to it. The byte work (SHA-256, HMAC, base64, strict
# UTF-8) is join_auth_bytes.gd's. Reasons are the TypeScript verifier's names.
extends Reference

const Bytes = preload("res://addons/matchplane/join_auth_bytes.gd")

const MAX_INSTANT = 9007199254740991
const MAC_BYTES = 32
const MAX_TOKEN_LENGTH = 1024

var keys = {}  # key id -> PoolByteArray ("" is the raw-file key)
var key_order = []
var clock_skew_ms = 30000


# keys_by_id: {key id: PoolByteArray of at least 32 bytes}. Returns "" or the problem.
func set_keys(keys_by_id: Dictionary) -> String:
	if keys_by_id.empty():
		return "key set holds no keys"
	for id in keys_by_id:
		if not is_key_id(id):
			return "key id must be 1-64 visible ASCII characters"
		if keys_by_id[id].size() < 32:
			return "key %s is shorter than 32 bytes" % id
	keys = keys_by_id
	key_order = keys_by_id.keys()
	return ""


# A key-set file (the Secret the allocator signs with) for set_keys: a JSON map {key id: base64
# key}, any other file the raw bytes of one key with id "" (as libs/join-auth KeySet.loadFile);
# {} when it cannot be read.
static func load_key_file(path: String) -> Dictionary:
	var file = File.new()
	if path == "" or file.open(path, File.READ) != OK:
		return {}
	var bytes = file.get_buffer(file.get_len())
	file.close()
	var parsed = JSON.parse(bytes.get_string_from_utf8())
	if parsed.error != OK or typeof(parsed.result) != TYPE_DICTIONARY:
		return {"": bytes}
	var keys_by_id = {}
	for id in parsed.result:
		var key = Bytes.base64_decode(str(parsed.result[id]))
		keys_by_id[id] = key if key != null else PoolByteArray()  # set_keys names the bad key
	return keys_by_id


static func is_named_key_id(id: String) -> bool:
	if id.length() < 1 or id.length() > 64:
		return false
	for c in id:
		var code = ord(c)
		if code < 0x21 or code > 0x7e:
			return false
	return true


static func is_key_id(id: String) -> bool:
	return id == "" or is_named_key_id(id)


static func is_canonical_uuid(id: String) -> bool:
	if id.length() != 36 or id == "00000000-0000-0000-0000-000000000000":
		return false
	for i in range(36):
		var c = id[i]
		if i == 8 or i == 13 or i == 18 or i == 23:
			if c != "-":
				return false
		elif Bytes.HEX.find(c) < 0:
			return false
	return true


static func is_bounded_text(text: String, max_bytes: int) -> bool:
	if text.empty() or Bytes.utf8(text).size() > max_bytes:
		return false
	for c in text:
		var code = ord(c)
		if code < 0x20 or code == 0x7f:
			return false
	return true


static func is_instant(value: int) -> bool:
	return value >= 0 and value <= MAX_INSTANT


static func claims_problem(c: Dictionary) -> String:
	if not is_key_id(c.keyId):
		return "keyId must be \"\" or 1-64 visible ASCII characters"
	if not is_canonical_uuid(c.matchId):
		return "matchId must be a canonical lowercase uuid"
	if not is_canonical_uuid(c.playerId):
		return "playerId must be a canonical lowercase uuid"
	if not is_bounded_text(c.serverId, 255):
		return "serverId must be 1-255 UTF-8 bytes without control characters"
	if not is_bounded_text(c.endpoint, 255):
		return "endpoint must be 1-255 UTF-8 bytes without control characters"
	if not is_instant(c.issuedAt) or not is_instant(c.expiresAt):
		return "issuedAt and expiresAt must be non-negative integers of epoch ms"
	if c.expiresAt <= c.issuedAt:
		return "expiresAt must be after issuedAt"
	return ""


static func manifest_problem(m: Dictionary) -> String:
	for field in ["matchId", "serverId", "keyId", "digest", "signature"]:
		if typeof(m.get(field)) != TYPE_STRING:
			return "%s must be a string" % field
	for field in ["entryCount", "issuedAt"]:
		if typeof(m.get(field)) != TYPE_INT:
			return "%s must be an integer" % field
	if m.has("revision") and typeof(m.revision) != TYPE_INT:
		return "revision must be an integer"
	if not is_canonical_uuid(m.matchId):
		return "matchId must be a canonical lowercase uuid"
	if not is_bounded_text(m.serverId, 255):
		return "serverId must be 1-255 UTF-8 bytes without control characters"
	if not is_key_id(m.keyId):
		return "keyId must be \"\" or 1-64 visible ASCII characters"
	if m.digest.length() != 64 or Bytes.from_hex(m.digest) == null:
		return "digest must be 64 lowercase hex digits"
	if m.entryCount < 1 or m.entryCount > 0xffffffff:
		return "entryCount must be an integer from 1 to 2^32 - 1"
	if not is_instant(m.issuedAt):
		return "issuedAt must be a non-negative integer of epoch ms"
	if m.has("revision") and (m.revision < 1 or m.revision > 0xffffffff):
		return "revision must be an integer from 1 to 2^32 - 1"
	return ""


# PoolByteArrays are passed by value, so the helpers return bytes to append.
static func _u(value: int, size: int) -> PoolByteArray:
	var out = PoolByteArray()
	for i in range(size - 1, -1, -1):
		out.append((value >> (8 * i)) & 255)
	return out


static func _str16(text: String) -> PoolByteArray:
	var bytes = Bytes.utf8(text)
	var out = _u(bytes.size(), 2)
	out.append_array(bytes)
	return out


# Claims are {keyId, matchId, playerId, serverId, endpoint, issuedAt, expiresAt} (times as ints).
static func encode_join_claims(c: Dictionary) -> PoolByteArray:
	var out = PoolByteArray([0x01])
	for field in ["keyId", "matchId", "playerId", "serverId", "endpoint"]:
		out.append_array(_str16(c[field]))
	out.append_array(_u(c.issuedAt, 8))
	out.append_array(_u(c.expiresAt, 8))
	return out


# Strict decode; returns the claims Dictionary or null (wrong tag, truncation, trailing bytes, invalid).
static func decode_join_claims(data: PoolByteArray):
	if data.size() < 1 or data[0] != 0x01:
		return null
	var pos = 1
	var c = {}
	for field in ["keyId", "matchId", "playerId", "serverId", "endpoint"]:
		if pos + 2 > data.size():
			return null
		var length = (data[pos] << 8) | data[pos + 1]
		pos += 2
		if pos + length > data.size():
			return null
		var text = Bytes.strict_utf8(data.subarray(pos, pos + length - 1) if length > 0 else PoolByteArray())
		if text == null:
			return null
		c[field] = text
		pos += length
	for field in ["issuedAt", "expiresAt"]:
		if pos + 8 > data.size():
			return null
		var value = 0
		for i in range(8):
			value = (value << 8) | data[pos + i]
		if value < 0 or value > MAX_INSTANT:
			return null
		c[field] = value
		pos += 8
	if pos != data.size() or claims_problem(c) != "":
		return null
	return c


static func encode_roster_digest_input(match_id: String, server_id: String, entries: Array) -> PoolByteArray:
	var out = PoolByteArray([0x02])
	out.append_array(_str16(match_id))
	out.append_array(_str16(server_id))
	out.append_array(_u(entries.size(), 4))
	for e in entries:
		out.append_array(_str16(e.playerId))
		out.append_array(_str16(e.token))
	return out


# Format 0x03; 0x04 with the revision last when the revision is above 1.
static func encode_roster_manifest(m: Dictionary) -> PoolByteArray:
	var revision = m.get("revision", 1)
	var out = PoolByteArray([0x03 if revision == 1 else 0x04])
	out.append_array(_str16(m.keyId))
	out.append_array(_str16(m.matchId))
	out.append_array(_str16(m.serverId))
	out.append_array(Bytes.from_hex(m.digest))
	out.append_array(_u(m.entryCount, 4))
	out.append_array(_u(m.issuedAt, 8))
	if revision != 1:
		out.append_array(_u(revision, 4))
	return out


func mac(key_id: String, data: PoolByteArray):
	return Bytes.hmac_sha256(keys[key_id], data) if keys.has(key_id) else null


func mac_matches(key_id: String, data: PoolByteArray, mac_bytes: PoolByteArray) -> bool:
	return keys.has(key_id) and Bytes.fixed_time_equals(Bytes.hmac_sha256(keys[key_id], data), mac_bytes)


static func _reject(reason: String, message: String) -> Dictionary:
	return {"ok": false, "reason": reason, "message": message}


static func _split(token: String):
	if token.length() > MAX_TOKEN_LENGTH:
		return null
	var parts = token.split(".", true)
	if parts.size() != 2:
		return null
	var claim_bytes = Bytes.base64url_decode(parts[0])
	var mac_bytes = Bytes.base64url_decode(parts[1])
	if claim_bytes == null or mac_bytes == null or mac_bytes.size() != MAC_BYTES:
		return null
	return [claim_bytes, mac_bytes]


# The other held keys are tried only on failure: signed under one, or relabelled to another.
func _check_mac(key_id: String, data: PoolByteArray, mac_bytes: PoolByteArray, signed: Dictionary, encode: String):
	if mac_matches(key_id, data, mac_bytes):
		return null
	for held in key_order:
		if held == key_id:
			continue
		var relabelled = signed.duplicate()
		relabelled.keyId = held
		if mac_matches(held, data, mac_bytes) or mac_matches(held, call(encode, relabelled), mac_bytes):
			return _reject("KEY_MISMATCH", "names key \"%s\" but was signed with key \"%s\"" % [key_id, held])
	if not keys.has(key_id):
		return _reject("UNKNOWN_KEY", "key id \"%s\" is not a current key" % key_id)
	return _reject("BAD_SIGNATURE", "MAC does not match under key \"%s\"" % key_id)


func _check_binding(signed: Dictionary, expect: Dictionary):
	if signed.serverId != expect.serverId:
		return _reject("WRONG_SERVER", "signed for server \"%s\"" % signed.serverId)
	if expect.has("matchId") and signed.matchId != expect.matchId:
		return _reject("WRONG_MATCH", "signed for match %s" % signed.matchId)
	if signed.issuedAt > expect.now + clock_skew_ms:
		return _reject("NOT_YET_VALID", "issued at %d, after now plus the clock skew" % signed.issuedAt)
	return null


# expect: {serverId, matchId (optional), now (int epoch ms)}. Returns {ok, reason, message, claims}.
func verify(token: String, expect: Dictionary) -> Dictionary:
	var parts = _split(token)
	if parts == null:
		return _reject("MALFORMED", "token is not two unpadded base64url parts with a 32-byte MAC")
	var claims = decode_join_claims(parts[0])
	if claims == null:
		return _reject("MALFORMED", "malformed claim bytes")
	var rejection = _check_mac(claims.keyId, parts[0], parts[1], claims, "encode_join_claims")
	if rejection == null:
		rejection = _check_binding(claims, expect)
	if rejection != null:
		return rejection
	if expect.now >= claims.expiresAt:
		return _reject("EXPIRED", "token expired at %d" % claims.expiresAt)
	return {"ok": true, "reason": "", "message": "", "claims": claims}


# manifest and entries as parsed JSON (times and counts converted to int by the caller).
func verify_roster(manifest: Dictionary, entries: Array, expect: Dictionary) -> Dictionary:
	var problem = manifest_problem(manifest)
	if problem != "":
		return _reject("MALFORMED", "malformed roster manifest: " + problem)
	var signature = Bytes.base64url_decode(manifest.signature)
	if signature == null or signature.size() != MAC_BYTES:
		return _reject("MALFORMED", "roster manifest signature must be a 32-byte unpadded base64url MAC")
	var rejection = _check_mac(manifest.keyId, encode_roster_manifest(manifest), signature, manifest, "encode_roster_manifest")
	if rejection == null:
		rejection = _check_binding(manifest, expect)
	if rejection != null:
		return rejection
	if entries.size() != manifest.entryCount:
		return _reject("ROSTER_COUNT_MISMATCH", "roster has %d entries; its manifest commits to %d" % [entries.size(), manifest.entryCount])
	for i in range(entries.size()):
		var e = entries[i]
		if typeof(e) != TYPE_DICTIONARY or typeof(e.get("playerId")) != TYPE_STRING or typeof(e.get("token")) != TYPE_STRING \
				or not is_canonical_uuid(e.playerId) or e.token.empty():
			return _reject("MALFORMED", "malformed roster: entry %d" % i)
	for i in range(1, entries.size()):
		if entries[i - 1].playerId >= entries[i].playerId:
			return _reject("ROSTER_NOT_CANONICAL", "entry %d: entries must be in ascending playerId order without duplicates" % i)
	var digest = Bytes.sha256(encode_roster_digest_input(manifest.matchId, manifest.serverId, entries))
	if not Bytes.fixed_time_equals(digest, Bytes.from_hex(manifest.digest)):
		return _reject("ROSTER_DIGEST_MISMATCH", "roster entries do not match the manifest digest")
	for i in range(entries.size()):
		var parts = _split(entries[i].token)
		var claims = decode_join_claims(parts[0]) if parts != null else null
		if claims == null or claims.playerId != entries[i].playerId or claims.matchId != manifest.matchId \
				or claims.serverId != manifest.serverId:
			return _reject("ROSTER_ENTRY_MISMATCH", "entry %d: token is not for this player, match and server" % i)
	return {"ok": true, "reason": "", "message": ""}
