// REFERENCE PIPELINES — not part of the product. Where the revocation service keeps a serial's
// status in Redis: `<ns>:s2:<generation>:<org>:<serial>`, the generation named by the hash
// `<ns>:serial-cache:v2` (libs/shared/serial-cache/src/serial-status.cache.ts). Read like the
// service does: once, then every second, never per request.
module.exports = async function cacheKeys({ redis, redisNamespace, orgId }) {
  const ns = redisNamespace ? `${redisNamespace}:` : '';
  const state = { prefix: undefined };
  const refresh = async () => {
    const generation = await redis.hget(`${ns}serial-cache:v2`, 'generation').catch(() => null);
    if (generation) state.prefix = `${ns}s2:${generation}:${orgId}:`;
  };
  await refresh();
  setInterval(() => void refresh(), 1000).unref();
  return (serial) => {
    if (state.prefix === undefined) throw new Error('the serial cache has no generation yet');
    return state.prefix + serial;
  };
};
