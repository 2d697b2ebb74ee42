#include "matchplane/join_auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "matchplane/json.hpp"

namespace matchplane {
namespace {

constexpr std::int64_t kMaxInstant = 9007199254740991LL;  // 2^53 - 1, as JavaScript holds it
constexpr std::size_t kMacBytes = 32;
constexpr std::size_t kMaxTokenLength = 1024;
constexpr std::uint8_t kJoinClaimsV1 = 0x01;
constexpr std::uint8_t kRosterDigestV1 = 0x02;
constexpr std::uint8_t kRosterManifestV1 = 0x03;
constexpr std::uint8_t kRosterManifestV2 = 0x04;
const char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Strict UTF-8: no overlong forms, surrogates or code points above U+10FFFF.
bool isValidUtf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t extra;
    std::uint32_t code;
    if (c < 0x80) { ++i; continue; }
    if (c >= 0xc2 && c <= 0xdf) { extra = 1; code = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { extra = 2; code = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { extra = 3; code = c & 0x07; }
    else return false;
    if (i + extra >= s.size()) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      unsigned char next = static_cast<unsigned char>(s[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = (code << 6) | (next & 0x3f);
    }
    if ((extra == 2 && code < 0x800) || (extra == 3 && code < 0x10000) || code > 0x10ffff ||
        (code >= 0xd800 && code <= 0xdfff)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

bool isNamedKeyId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}
bool isKeyId(const std::string& id) { return id.empty() || isNamedKeyId(id); }

bool isCanonicalUuid(const std::string& id) {
  if (id.size() != 36 || id == "00000000-0000-0000-0000-000000000000") return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    char c = id[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

bool isBoundedText(const std::string& text, std::size_t maxBytes) {
  if (text.empty() || text.size() > maxBytes || !isValidUtf8(text)) return false;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}
bool isServerId(const std::string& id) { return isBoundedText(id, 255); }
bool isInstant(std::int64_t value) { return value >= 0 && value <= kMaxInstant; }

std::string claimsProblem(const JoinClaims& c) {
  if (!isKeyId(c.keyId)) return "keyId must be \"\" or 1-64 visible ASCII characters";
  if (!isCanonicalUuid(c.matchId)) return "matchId must be a canonical lowercase uuid";
  if (!isCanonicalUuid(c.playerId)) return "playerId must be a canonical lowercase uuid";
  if (!isServerId(c.serverId)) return "serverId must be 1-255 UTF-8 bytes without control characters";
  if (!isBoundedText(c.endpoint, 255)) return "endpoint must be 1-255 UTF-8 bytes without control characters";
  if (!isInstant(c.issuedAt)) return "issuedAt must be a non-negative integer of epoch ms";
  if (!isInstant(c.expiresAt)) return "expiresAt must be a non-negative integer of epoch ms";
  if (c.expiresAt <= c.issuedAt) return "expiresAt must be after issuedAt";
  return "";
}

std::string manifestProblem(const RosterManifest& m) {
  if (!isCanonicalUuid(m.matchId)) return "matchId must be a canonical lowercase uuid";
  if (!isServerId(m.serverId)) return "serverId must be 1-255 UTF-8 bytes without control characters";
  if (!isKeyId(m.keyId)) return "keyId must be \"\" or 1-64 visible ASCII characters";
  if (m.digest.size() != 64) return "digest must be 64 lowercase hex digits";
  for (char c : m.digest) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return "digest must be 64 lowercase hex digits";
  }
  if (m.entryCount < 1 || m.entryCount > 0xffffffffLL) return "entryCount must be an integer from 1 to 2^32 - 1";
  if (!isInstant(m.issuedAt)) return "issuedAt must be a non-negative integer of epoch ms";
  if (m.revision && (*m.revision < 1 || *m.revision > 0xffffffffLL)) {
    return "revision must be an integer from 1 to 2^32 - 1";
  }
  return "";
}

class Writer {
 public:
  Writer& u8(std::uint8_t v) { out.push_back(v); return *this; }
  Writer& u16(std::uint32_t v) { return u8(std::uint8_t(v >> 8)).u8(std::uint8_t(v)); }
  Writer& u32(std::uint64_t v) { return u16(std::uint32_t(v >> 16) & 0xffff).u16(std::uint32_t(v) & 0xffff); }
  Writer& u64(std::uint64_t v) { return u32(v >> 32).u32(v & 0xffffffffULL); }
  Writer& str16(const std::string& s) {
    if (s.size() > 0xffff || !isValidUtf8(s)) throw JoinAuthError("INVALID_CLAIMS", "string cannot be encoded");
    u16(std::uint32_t(s.size()));
    out.insert(out.end(), s.begin(), s.end());
    return *this;
  }
  Writer& fixed(const Bytes& b) { out.insert(out.end(), b.begin(), b.end()); return *this; }
  Bytes out;
};

class Reader {
 public:
  explicit Reader(const Bytes& b) : bytes_(b) {}
  bool u8(std::uint8_t& v) {
    if (pos_ + 1 > bytes_.size()) return false;
    v = bytes_[pos_++];
    return true;
  }
  bool u64(std::int64_t& v) {
    if (pos_ + 8 > bytes_.size()) return false;
    std::uint64_t x = 0;
    for (int i = 0; i < 8; ++i) x = (x << 8) | bytes_[pos_++];
    if (x > std::uint64_t(kMaxInstant)) return false;
    v = std::int64_t(x);
    return true;
  }
  bool str16(std::string& s) {
    if (pos_ + 2 > bytes_.size()) return false;
    std::size_t length = (std::size_t(bytes_[pos_]) << 8) | bytes_[pos_ + 1];
    pos_ += 2;
    if (pos_ + length > bytes_.size()) return false;
    s.assign(bytes_.begin() + long(pos_), bytes_.begin() + long(pos_ + length));
    pos_ += length;
    return isValidUtf8(s);
  }
  bool atEnd() const { return pos_ == bytes_.size(); }

 private:
  const Bytes& bytes_;
  std::size_t pos_ = 0;
};

int alphabetIndex(const char* alphabet, char c) {
  for (int i = 0; i < 64; ++i) {
    if (alphabet[i] == c) return i;
  }
  return -1;
}

// Decodes unpadded text; refuses a length of 1 mod 4 and non-zero trailing bits (canonical only).
std::optional<Bytes> decodeUnpadded(const std::string& text, const char* alphabet) {
  if (text.size() % 4 == 1) return std::nullopt;
  Bytes out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    int index = alphabetIndex(alphabet, c);
    if (index < 0) return std::nullopt;
    buffer = (buffer << 6) | std::uint32_t(index);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(std::uint8_t(buffer >> bits));
      buffer &= (1u << bits) - 1;
    }
  }
  if (buffer != 0) return std::nullopt;
  return out;
}

std::string encodeUnpadded(const Bytes& bytes, const char* alphabet) {
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (std::uint8_t b : bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += alphabet[(buffer >> bits) & 0x3f];
    }
  }
  if (bits > 0) out += alphabet[(buffer << (6 - bits)) & 0x3f];
  return out;
}

struct TokenParts {
  Bytes claimBytes;
  Bytes mac;
};

std::optional<TokenParts> splitToken(const std::string& token) {
  if (token.size() > kMaxTokenLength) return std::nullopt;
  std::size_t dot = token.find('.');
  if (dot == std::string::npos || token.find('.', dot + 1) != std::string::npos) return std::nullopt;
  auto claimBytes = base64UrlDecode(token.substr(0, dot));
  auto mac = base64UrlDecode(token.substr(dot + 1));
  if (!claimBytes || !mac || mac->size() != kMacBytes) return std::nullopt;
  return TokenParts{*claimBytes, *mac};
}

Verification reject(const std::string& reason, const std::string& message) {
  Verification v;
  v.reason = reason;
  v.message = message;
  return v;
}

template <typename Relabel>
std::optional<Verification> checkMac(const KeySet& keys, const std::string& keyId, const Bytes& bytes,
                                     const Bytes& mac, Relabel relabel) {
  if (keys.macMatches(keyId, bytes, mac)) return std::nullopt;
  // Only failures pay for these: was it signed under another held key (or relabelled)?
  for (const std::string& held : keys.ids()) {
    if (held == keyId) continue;
    if (keys.macMatches(held, bytes, mac) || keys.macMatches(held, relabel(held), mac)) {
      return reject("KEY_MISMATCH", "names key \"" + keyId + "\" but was signed with key \"" + held + "\"");
    }
  }
  if (!keys.has(keyId)) return reject("UNKNOWN_KEY", "key id \"" + keyId + "\" is not a current key");
  return reject("BAD_SIGNATURE", "MAC does not match under key \"" + keyId + "\"");
}

std::optional<Verification> checkBinding(const std::string& serverId, const std::string& matchId,
                                         std::int64_t issuedAt, const Expectation& expect,
                                         std::int64_t clockSkewMs) {
  if (serverId != expect.serverId) return reject("WRONG_SERVER", "signed for server \"" + serverId + "\"");
  if (expect.matchId && matchId != *expect.matchId) return reject("WRONG_MATCH", "signed for match " + matchId);
  if (issuedAt > expect.now + clockSkewMs) {
    return reject("NOT_YET_VALID", "issued at " + std::to_string(issuedAt) + ", after now plus the clock skew");
  }
  return std::nullopt;
}

// Nonsense expectations must throw: an empty server id would otherwise make every check moot.
void assertExpectation(const Expectation& expect) {
  if (!isServerId(expect.serverId)) throw JoinAuthError("INVALID_EXPECTATION", "expect.serverId must be the verifying server id");
  if (expect.matchId && !isCanonicalUuid(*expect.matchId)) {
    throw JoinAuthError("INVALID_EXPECTATION", "expect.matchId must be a canonical lowercase uuid");
  }
  if (!isInstant(expect.now)) throw JoinAuthError("INVALID_EXPECTATION", "expect.now must be a non-negative integer of epoch ms");
}

}  // namespace

bool JoinClaims::operator==(const JoinClaims& o) const {
  return keyId == o.keyId && matchId == o.matchId && playerId == o.playerId && serverId == o.serverId &&
         endpoint == o.endpoint && issuedAt == o.issuedAt && expiresAt == o.expiresAt;
}

std::string toHex(const Bytes& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 0xf];
  }
  return out;
}

std::optional<Bytes> fromHex(const std::string& hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  Bytes out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    int hi = alphabetIndex("0123456789abcdef", hex[i]);
    int lo = alphabetIndex("0123456789abcdef", hex[i + 1]);
    if (hi < 0 || hi > 15 || lo < 0 || lo > 15) return std::nullopt;
    out.push_back(std::uint8_t(hi * 16 + lo));
  }
  return out;
}

std::string base64UrlEncode(const Bytes& bytes) { return encodeUnpadded(bytes, kBase64Url); }
std::optional<Bytes> base64UrlDecode(const std::string& text) { return decodeUnpadded(text, kBase64Url); }

std::optional<Bytes> base64Decode(const std::string& text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  std::string body = text.substr(0, text.size() - padding);
  if (body.size() % 4 == 1 || (padding > 0 && body.size() % 4 + padding != 4)) return std::nullopt;
  return decodeUnpadded(body, kBase64);
}

Bytes sha256(const Bytes& bytes) {
  Bytes out(SHA256_DIGEST_LENGTH);
  SHA256(bytes.data(), bytes.size(), out.data());
  return out;
}

Bytes encodeJoinClaims(const JoinClaims& claims) {
  std::string problem = claimsProblem(claims);
  if (!problem.empty()) throw JoinAuthError("INVALID_CLAIMS", "invalid join claims: " + problem);
  return Writer()
      .u8(kJoinClaimsV1)
      .str16(claims.keyId)
      .str16(claims.matchId)
      .str16(claims.playerId)
      .str16(claims.serverId)
      .str16(claims.endpoint)
      .u64(std::uint64_t(claims.issuedAt))
      .u64(std::uint64_t(claims.expiresAt))
      .out;
}

std::optional<JoinClaims> decodeJoinClaims(const Bytes& bytes, std::string* problem) {
  Reader reader(bytes);
  JoinClaims c;
  std::uint8_t format = 0;
  bool read = reader.u8(format) && format == kJoinClaimsV1 && reader.str16(c.keyId) &&
              reader.str16(c.matchId) && reader.str16(c.playerId) && reader.str16(c.serverId) &&
              reader.str16(c.endpoint) && reader.u64(c.issuedAt) && reader.u64(c.expiresAt) &&
              reader.atEnd();
  std::string found = read ? claimsProblem(c) : "not join claims v1: wrong tag, truncated or trailing bytes";
  if (!found.empty()) {
    if (problem != nullptr) *problem = "malformed claim bytes: " + found;
    return std::nullopt;
  }
  return c;
}

Bytes encodeRosterDigestInput(const std::string& matchId, const std::string& serverId,
                              const std::vector<RosterEntry>& entries) {
  Writer writer;
  writer.u8(kRosterDigestV1).str16(matchId).str16(serverId).u32(entries.size());
  for (const RosterEntry& entry : entries) writer.str16(entry.playerId).str16(entry.token);
  return writer.out;
}

Bytes encodeRosterManifest(const RosterManifest& m) {
  std::string problem = manifestProblem(m);
  if (!problem.empty()) throw JoinAuthError("INVALID_ROSTER", "invalid roster manifest: " + problem);
  std::int64_t revision = m.revision.value_or(1);
  Writer writer;
  writer.u8(revision == 1 ? kRosterManifestV1 : kRosterManifestV2)
      .str16(m.keyId)
      .str16(m.matchId)
      .str16(m.serverId)
      .fixed(*fromHex(m.digest))
      .u32(std::uint64_t(m.entryCount))
      .u64(std::uint64_t(m.issuedAt));
  if (revision != 1) writer.u32(std::uint64_t(revision));
  return writer.out;
}

KeySet::KeySet(std::map<std::string, Bytes> keys) : keys_(std::move(keys)) {
  if (keys_.empty()) throw JoinAuthError("INVALID_KEY_SET", "key set holds no keys");
  for (const auto& entry : keys_) {
    if (!isKeyId(entry.first)) {
      throw JoinAuthError("INVALID_KEY_SET", "key id \"" + entry.first + "\" must be 1-64 visible ASCII characters");
    }
    if (entry.second.size() < kMinKeyBytes) {
      throw JoinAuthError("INVALID_KEY_SET", "key \"" + entry.first + "\" is shorter than 32 bytes");
    }
  }
}

KeySet KeySet::fromJsonMap(const std::string& text) {
  json::Value parsed;
  try {
    parsed = json::parse(text);
  } catch (const json::ParseError& error) {
    throw JoinAuthError("INVALID_KEY_SET", std::string("key map does not parse: ") + error.what());
  }
  if (!parsed.isObject()) throw JoinAuthError("INVALID_KEY_SET", "key map must be a JSON object");
  std::map<std::string, Bytes> keys;
  for (const auto& member : parsed.object) {
    if (!isNamedKeyId(member.first)) {
      throw JoinAuthError("INVALID_KEY_SET", "key id \"" + member.first + "\" must be 1-64 visible ASCII characters");
    }
    auto key = member.second.isString() ? base64Decode(member.second.string) : std::nullopt;
    if (!key) throw JoinAuthError("INVALID_KEY_SET", "key \"" + member.first + "\" must be standard padded base64");
    keys[member.first] = *key;
  }
  return KeySet(std::move(keys));
}

KeySet KeySet::parseKeyFile(const Bytes& contents) {
  std::string text(contents.begin(), contents.end());
  std::size_t first = text.find_first_not_of(" \t\r\n");
  std::size_t last = text.find_last_not_of(" \t\r\n");
  // Text shaped like an object must parse as one: a typo must not turn a map into a raw key.
  if (isValidUtf8(text) && first != std::string::npos && text[first] == '{' && text[last] == '}') {
    return fromJsonMap(text);
  }
  return KeySet({{"", contents}});
}

KeySet KeySet::unite(const KeySet& a, const KeySet& b) {
  std::map<std::string, Bytes> keys = a.keys_;
  for (const auto& entry : b.keys_) {
    auto held = keys.find(entry.first);
    if (held != keys.end() && held->second != entry.second) {
      throw JoinAuthError("INVALID_KEY_SET", "key id \"" + entry.first + "\" names two different keys");
    }
    keys[entry.first] = entry.second;
  }
  return KeySet(std::move(keys));
}

std::vector<std::string> KeySet::ids() const {
  std::vector<std::string> ids;
  for (const auto& entry : keys_) ids.push_back(entry.first);
  return ids;
}

KeySet KeySet::without(const std::vector<std::string>& keyIds) const {
  std::map<std::string, Bytes> keys = keys_;
  for (const std::string& id : keyIds) keys.erase(id);
  return KeySet(std::move(keys));
}

std::optional<Bytes> KeySet::mac(const std::string& keyId, const Bytes& bytes) const {
  auto key = keys_.find(keyId);
  if (key == keys_.end()) return std::nullopt;
  Bytes out(EVP_MAX_MD_SIZE);
  unsigned int length = 0;
  HMAC(EVP_sha256(), key->second.data(), int(key->second.size()), bytes.data(), bytes.size(), out.data(), &length);
  out.resize(length);
  return out;
}

bool KeySet::macMatches(const std::string& keyId, const Bytes& bytes, const Bytes& mac) const {
  auto expected = this->mac(keyId, bytes);
  return expected && expected->size() == mac.size() && CRYPTO_memcmp(expected->data(), mac.data(), mac.size()) == 0;
}

JoinTokenVerifier::JoinTokenVerifier(KeySet keys, std::int64_t clockSkewMs)
    : keys_(std::move(keys)), clockSkewMs_(clockSkewMs) {
  if (clockSkewMs < 0) throw JoinAuthError("INVALID_EXPECTATION", "clockSkewMs must be a non-negative integer");
}

Verification JoinTokenVerifier::verify(const std::string& token, const Expectation& expect) const {
  assertExpectation(expect);
  auto parts = splitToken(token);
  if (!parts) return reject("MALFORMED", "token is not two unpadded base64url parts with a 32-byte MAC");
  std::string problem;
  auto claims = decodeJoinClaims(parts->claimBytes, &problem);
  if (!claims) return reject("MALFORMED", problem);

  auto keyRejection = checkMac(keys_, claims->keyId, parts->claimBytes, parts->mac, [&](const std::string& keyId) {
    JoinClaims relabelled = *claims;
    relabelled.keyId = keyId;
    return encodeJoinClaims(relabelled);
  });
  if (keyRejection) return *keyRejection;
  auto bindingRejection = checkBinding(claims->serverId, claims->matchId, claims->issuedAt, expect, clockSkewMs_);
  if (bindingRejection) return *bindingRejection;
  if (expect.now >= claims->expiresAt) return reject("EXPIRED", "token expired at " + std::to_string(claims->expiresAt));
  Verification ok;
  ok.ok = true;
  ok.claims = *claims;
  return ok;
}

Verification JoinTokenVerifier::verifyRoster(const RosterManifest& manifest, const std::vector<RosterEntry>& entries,
                                             const Expectation& expect) const {
  assertExpectation(expect);
  std::string problem = manifestProblem(manifest);
  if (!problem.empty()) return reject("MALFORMED", "malformed roster manifest: " + problem);
  auto signature = base64UrlDecode(manifest.signature);
  if (!signature || signature->size() != kMacBytes) {
    return reject("MALFORMED", "roster manifest signature must be a 32-byte unpadded base64url MAC");
  }
  auto keyRejection = checkMac(keys_, manifest.keyId, encodeRosterManifest(manifest), *signature,
                               [&](const std::string& keyId) {
                                 RosterManifest relabelled = manifest;
                                 relabelled.keyId = keyId;
                                 return encodeRosterManifest(relabelled);
                               });
  if (keyRejection) return *keyRejection;
  auto bindingRejection = checkBinding(manifest.serverId, manifest.matchId, manifest.issuedAt, expect, clockSkewMs_);
  if (bindingRejection) return *bindingRejection;

  if (std::int64_t(entries.size()) != manifest.entryCount) {
    return reject("ROSTER_COUNT_MISMATCH", "roster has " + std::to_string(entries.size()) +
                                               " entries; its manifest commits to " + std::to_string(manifest.entryCount));
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!isCanonicalUuid(entries[i].playerId) || entries[i].token.empty() || entries[i].token.size() > 0xffff ||
        !isValidUtf8(entries[i].token)) {
      return reject("MALFORMED", "malformed roster: entry " + std::to_string(i));
    }
  }
  for (std::size_t i = 1; i < entries.size(); ++i) {
    if (i > 0 && entries[i - 1].playerId >= entries[i].playerId) {
      return reject("ROSTER_NOT_CANONICAL", "entry " + std::to_string(i) +
                                                ": entries must be in ascending playerId order without duplicates");
    }
  }
  Bytes digest = sha256(encodeRosterDigestInput(manifest.matchId, manifest.serverId, entries));
  Bytes signedDigest = *fromHex(manifest.digest);
  if (CRYPTO_memcmp(digest.data(), signedDigest.data(), digest.size()) != 0) {
    return reject("ROSTER_DIGEST_MISMATCH", "roster entries do not match the manifest digest");
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto parts = splitToken(entries[i].token);
    auto claims = parts ? decodeJoinClaims(parts->claimBytes) : std::nullopt;
    if (!claims || claims->playerId != entries[i].playerId || claims->matchId != manifest.matchId ||
        claims->serverId != manifest.serverId) {
      return reject("ROSTER_ENTRY_MISMATCH",
                    "entry " + std::to_string(i) + ": token is not for this player, match and server");
    }
  }
  Verification ok;
  ok.ok = true;
  return ok;
}

}  // namespace matchplane
