import { scratchKeyFiles, testKey } from './join-auth.factories';
import { loadSigningKeys, type ConfiguredKeyFile } from './key-file';
import { RAW_KEY_ID } from './key-set';

class KeyMaterialError extends Error {}

const keyFile = scratchKeyFiles();

function configuredFile(contents: string | Buffer): ConfiguredKeyFile {
  return {
    variable: 'EXAMPLE_KEYS_FILE',
    path: keyFile(contents),
    purpose: 'example',
    fail: (message) => new KeyMaterialError(message),
  };
}

const keyMap = JSON.stringify({
  k1: testKey('k1').toString('base64'),
  k2: testKey('k2').toString('base64'),
});

describe(loadSigningKeys.name, () => {
  it('returns the key set and the configured active key id', () => {
    const signing = loadSigningKeys(configuredFile(keyMap), 'k2', 'EXAMPLE_ACTIVE_KEY_ID');
    expect(signing.activeKeyId).toBe('k2');
    expect(signing.keys.ids()).toEqual(['k1', 'k2']);
  });

  it("signs with a raw key file's only key when no active key id is configured", () => {
    const signing = loadSigningKeys(
      configuredFile(testKey('raw')),
      undefined,
      'EXAMPLE_ACTIVE_KEY_ID',
    );
    expect(signing.activeKeyId).toBe(RAW_KEY_ID);
  });

  it.each([
    [
      undefined,
      /^EXAMPLE_ACTIVE_KEY_ID is not set; it must name one of the keys of ".*" \("k1", "k2"\)$/,
    ],
    ['k3', /^EXAMPLE_ACTIVE_KEY_ID "k3" is not in the key file; it must name .* \("k1", "k2"\)$/],
  ])('fails with the app error naming the keys for active key id %p', (active, message) => {
    const call = () => loadSigningKeys(configuredFile(keyMap), active, 'EXAMPLE_ACTIVE_KEY_ID');
    expect(call).toThrow(KeyMaterialError);
    expect(call).toThrow(message);
  });

  it('fails with the app error naming the variable and the file when the file holds no keys', () => {
    const file = configuredFile('');
    expect(() => loadSigningKeys(file, 'k1', 'EXAMPLE_ACTIVE_KEY_ID')).toThrow(
      new KeyMaterialError(
        `EXAMPLE_KEYS_FILE ${JSON.stringify(file.path)} holds no usable example keys: key file ${file.path}: key "" is 0 bytes; at least 32 are required`,
      ),
    );
  });
});
