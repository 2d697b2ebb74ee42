import { simulatedFetch } from './locations';

describe(simulatedFetch.name, () => {
  const fetched: string[] = [];
  beforeEach(() => {
    fetched.length = 0;
    jest.spyOn(globalThis, 'fetch').mockImplementation((url) => {
      fetched.push(typeof url === 'string' ? url : url instanceof URL ? url.href : url.url);
      return Promise.resolve(new Response('{}', { status: 200 }));
    });
  });
  afterEach(() => jest.restoreAllMocks());

  it('sends a request to a probe edge through the city’s proxy in front of it', async () => {
    const cityFetch = simulatedFetch({ 'http://127.0.0.1:7101': 'http://127.0.0.1:45001' });
    await cityFetch('http://127.0.0.1:7101/v1/probe/answers', { method: 'POST' });
    expect(fetched).toEqual(['http://127.0.0.1:45001/v1/probe/answers']);
  });

  it('leaves every other request (the API, another edge) where it was going', async () => {
    const cityFetch = simulatedFetch({ 'http://127.0.0.1:7101': 'http://127.0.0.1:45001' });
    await cityFetch('http://127.0.0.1:3000/v1/probes/eu-west/answer', { method: 'POST' });
    await cityFetch('http://127.0.0.1:7102/v1/probe/challenges', { method: 'POST' });
    expect(fetched).toEqual([
      'http://127.0.0.1:3000/v1/probes/eu-west/answer',
      'http://127.0.0.1:7102/v1/probe/challenges',
    ]);
  });
});
