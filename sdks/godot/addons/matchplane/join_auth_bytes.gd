# The byte work of the join-auth verifier (join_auth.gd): SHA-256, HMAC-SHA256 (RFC 2104: Godot
# 3.2 has HashingContext but no HMAC), a fixed-time comparison, hex, base64 and base64url without
# padding, and strict UTF-8. Static functions only.
extends Reference

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const HEX = "0123456789abcdef"


static func sha256(data: PoolByteArray) -> PoolByteArray:
	var ctx = HashingContext.new()
	ctx.start(HashingContext.HASH_SHA256)
	if data.size() > 0:
		ctx.update(data)
	return ctx.finish()


static func hmac_sha256(key: PoolByteArray, data: PoolByteArray) -> PoolByteArray:
	var k = key
	if k.size() > 64:
		k = sha256(k)
	var inner = PoolByteArray()
	var outer = PoolByteArray()
	for i in range(64):
		var b = k[i] if i < k.size() else 0
		inner.append(b ^ 0x36)
		outer.append(b ^ 0x5c)
	inner.append_array(data)
	outer.append_array(sha256(inner))
	return sha256(outer)


# Same time for every pair of equal-length inputs.
static func fixed_time_equals(a: PoolByteArray, b: PoolByteArray) -> bool:
	if a.size() != b.size():
		return false
	var difference = 0
	for i in range(a.size()):
		difference |= a[i] ^ b[i]
	return difference == 0


static func to_hex(data: PoolByteArray) -> String:
	var out = ""
	for b in data:
		out += HEX[b >> 4] + HEX[b & 15]
	return out


static func from_hex(text: String):
	if text.length() % 2 != 0:
		return null
	var out = PoolByteArray()
	for i in range(0, text.length(), 2):
		var hi = HEX.find(text[i])
		var lo = HEX.find(text[i + 1])
		if hi < 0 or lo < 0:
			return null
		out.append(hi * 16 + lo)
	return out


static func b64_encode(data: PoolByteArray, alphabet: String) -> String:
	var out = ""
	var buffer = 0
	var bits = 0
	for b in data:
		buffer = (buffer << 8) | b
		bits += 8
		while bits >= 6:
			bits -= 6
			out += alphabet[(buffer >> bits) & 63]
		buffer &= (1 << bits) - 1
	if bits > 0:
		out += alphabet[(buffer << (6 - bits)) & 63]
	return out


# Canonical only: no padding, nothing outside the alphabet, zero trailing bits. null otherwise.
static func b64_decode_unpadded(text: String, alphabet: String):
	if text.length() % 4 == 1:
		return null
	var out = PoolByteArray()
	var buffer = 0
	var bits = 0
	for c in text:
		var index = alphabet.find(c)
		if index < 0:
			return null
		buffer = (buffer << 6) | index
		bits += 6
		if bits >= 8:
			bits -= 8
			out.append((buffer >> bits) & 255)
			buffer &= (1 << bits) - 1
	return out if buffer == 0 else null


static func base64url_encode(data: PoolByteArray) -> String:
	return b64_encode(data, B64URL)


static func base64url_decode(text: String):
	return b64_decode_unpadded(text, B64URL)


# Standard padded base64, as `openssl rand -base64 32` prints it.
static func base64_decode(text: String):
	if text.length() % 4 != 0:
		return null
	var padding = 0
	while padding < 2 and padding < text.length() and text[text.length() - 1 - padding] == "=":
		padding += 1
	var body = text.substr(0, text.length() - padding)
	if padding > 0 and body.length() % 4 + padding != 4:
		return null
	return b64_decode_unpadded(body, B64)


static func utf8(text: String) -> PoolByteArray:
	return text.to_utf8()


# Strict UTF-8 (no overlong forms, surrogates or code points above U+10FFFF): Godot's own
# decoder is lenient, so the bytes are checked first and must also survive a round trip.
static func strict_utf8(data: PoolByteArray):
	var i = 0
	while i < data.size():
		var c = data[i]
		var extra = 0
		var code = 0
		if c < 0x80:
			i += 1
			continue
		elif c >= 0xc2 and c <= 0xdf:
			extra = 1
			code = c & 0x1f
		elif c >= 0xe0 and c <= 0xef:
			extra = 2
			code = c & 0x0f
		elif c >= 0xf0 and c <= 0xf4:
			extra = 3
			code = c & 0x07
		else:
			return null
		if i + extra >= data.size():
			return null
		for k in range(1, extra + 1):
			if data[i + k] & 0xc0 != 0x80:
				return null
			code = (code << 6) | (data[i + k] & 0x3f)
		if (extra == 2 and code < 0x800) or (extra == 3 and code < 0x10000) or code > 0x10ffff \
				or (code >= 0xd800 and code <= 0xdfff):
			return null
		i += extra + 1
	var text = data.get_string_from_utf8()
	return text if text.to_utf8() == data else null
