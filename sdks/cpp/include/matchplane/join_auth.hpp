// Offline verifier of Matchplane join tokens and roster manifests for native dedicated servers.
// The byte layouts are docs/JOIN-AUTH.md; test/fixtures/join-auth-vectors.json is their
// specification and test/vectors_test.cpp holds this code to it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace matchplane {

using Bytes = std::vector<std::uint8_t>;

/** Refused key material or an unusable expectation: a programming or deployment error. */
class JoinAuthError : public std::runtime_error {
 public:
  JoinAuthError(std::string code, const std::string& message)
      : std::runtime_error(message), code(std::move(code)) {}
  const std::string code;  // INVALID_KEY_SET, INVALID_EXPECTATION, INVALID_CLAIMS
};

struct JoinClaims {
  std::string keyId;
  std::string matchId;
  std::string playerId;
  std::string serverId;
  std::string endpoint;
  std::int64_t issuedAt = 0;   // unix epoch ms
  std::int64_t expiresAt = 0;  // unix epoch ms, exclusive
  bool operator==(const JoinClaims& other) const;
};

struct RosterEntry {
  std::string playerId;
  std::string token;
};

/** A manifest as published (JSON); revision absent means the match's first roster. */
struct RosterManifest {
  std::string matchId;
  std::string serverId;
  std::string keyId;
  std::string digest;  // 64 lowercase hex digits
  std::int64_t entryCount = 0;
  std::int64_t issuedAt = 0;
  std::optional<std::int64_t> revision;
  std::string signature;  // unpadded base64url HMAC-SHA256 of the manifest bytes
};

struct Expectation {
  std::string serverId;                // the verifying game server's own id
  std::optional<std::string> matchId;  // when set, the token must be for this match
  std::int64_t now = 0;                // unix epoch ms, from the caller's clock
};

/** The reason names are the TypeScript verifier's, so logs compare across languages. */
struct Verification {
  bool ok = false;
  std::string reason;   // empty when ok
  std::string message;  // for logs; never key material
  JoinClaims claims;    // set when a token verified
};

/** HMAC keys by key id ("" is the raw-file key). Prints nothing but ids. */
class KeySet {
 public:
  static constexpr std::size_t kMinKeyBytes = 32;

  /** Throws INVALID_KEY_SET for an empty set, a bad key id or a key under 32 bytes. */
  explicit KeySet(std::map<std::string, Bytes> keys);
  /** A key file's {"keyId": "standard padded base64"} map, as JSON text. */
  static KeySet fromJsonMap(const std::string& json);
  /** A key file's contents: a JSON object is a key map, anything else one raw key with id "". */
  static KeySet parseKeyFile(const Bytes& contents);
  /** Keys of both sets; one id naming two different keys is refused. */
  static KeySet unite(const KeySet& a, const KeySet& b);

  std::vector<std::string> ids() const;
  bool has(const std::string& keyId) const { return keys_.count(keyId) != 0; }
  /** The set minus these ids: how a verifier retires a key. */
  KeySet without(const std::vector<std::string>& keyIds) const;
  std::optional<Bytes> mac(const std::string& keyId, const Bytes& bytes) const;
  /** Constant-time (CRYPTO_memcmp); false for a key the set does not hold. */
  bool macMatches(const std::string& keyId, const Bytes& bytes, const Bytes& mac) const;

 private:
  std::map<std::string, Bytes> keys_;
};

// Byte layouts (exposed so tests and tools can check them against the vectors).
Bytes encodeJoinClaims(const JoinClaims& claims);
/** Strict: wrong tag, truncation, trailing bytes or an invalid claim return nullopt. */
std::optional<JoinClaims> decodeJoinClaims(const Bytes& bytes, std::string* problem = nullptr);
Bytes encodeRosterDigestInput(const std::string& matchId, const std::string& serverId,
                              const std::vector<RosterEntry>& entries);
Bytes sha256(const Bytes& bytes);
/** The bytes the manifest signature covers (format 0x03, or 0x04 with a revision above 1). */
Bytes encodeRosterManifest(const RosterManifest& manifest);

std::string toHex(const Bytes& bytes);
std::optional<Bytes> fromHex(const std::string& hex);
std::string base64UrlEncode(const Bytes& bytes);
/** Canonical unpadded base64url only: no padding, no stray characters, zero trailing bits. */
std::optional<Bytes> base64UrlDecode(const std::string& text);
/** Canonical standard padded base64 (as `openssl rand -base64 32` prints). */
std::optional<Bytes> base64Decode(const std::string& text);

class JoinTokenVerifier {
 public:
  static constexpr std::int64_t kDefaultClockSkewMs = 30000;
  explicit JoinTokenVerifier(KeySet keys, std::int64_t clockSkewMs = kDefaultClockSkewMs);

  /** Checks in docs/JOIN-AUTH.md order; the first failure is the reason. */
  Verification verify(const std::string& token, const Expectation& expect) const;
  /** The manifest's MAC and binding, then that the entries are exactly those it commits to. */
  Verification verifyRoster(const RosterManifest& manifest, const std::vector<RosterEntry>& entries,
                            const Expectation& expect) const;

 private:
  KeySet keys_;
  std::int64_t clockSkewMs_;
};

}  // namespace matchplane
