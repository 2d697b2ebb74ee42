import { SetMetadata } from '@nestjs/common';
import { StaticMetadataReflector } from './static-metadata.reflector';

@SetMetadata('scopes', ['class'])
class Routes {
  @SetMetadata('scopes', ['handler'])
  @SetMetadata('limit', 5)
  limited(): void {}

  open(): void {}
}

describe('StaticMetadataReflector', () => {
  const limited = Object.getOwnPropertyDescriptor(Routes.prototype, 'limited')?.value as () => void;
  const open = Object.getOwnPropertyDescriptor(Routes.prototype, 'open')?.value as () => void;

  it('answers as Reflector does, handler over class', () => {
    const reflector = new StaticMetadataReflector();
    expect(reflector.getAllAndOverride('limit', [limited, Routes])).toBe(5);
    expect(reflector.getAllAndOverride('limit', [open, Routes])).toBeUndefined();
    expect(reflector.getAllAndMerge('scopes', [limited, Routes])).toEqual(['handler', 'class']);
    expect(reflector.getAllAndMerge('scopes', [open, Routes])).toEqual(['class']);
  });

  it('reads each key of a handler and class once', () => {
    const reflector = new StaticMetadataReflector();
    const read = jest.spyOn(Reflect, 'getMetadata');
    reflector.getAllAndOverride('limit', [limited, Routes]);
    reflector.getAllAndMerge('scopes', [limited, Routes]);
    const firstPass = read.mock.calls.length;
    for (let i = 0; i < 3; i++) {
      reflector.getAllAndOverride('limit', [limited, Routes]);
      reflector.getAllAndMerge('scopes', [limited, Routes]);
    }
    expect(firstPass).toBeGreaterThan(0);
    expect(read).toHaveBeenCalledTimes(firstPass);
    read.mockRestore();
  });
});
