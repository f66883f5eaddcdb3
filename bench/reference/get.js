// REFERENCE PIPELINE — not part of the product. A GET through the bus, bare: one SELECT of the
// product by primary key (in the caller's organization), answered as is.
module.exports = {
  name: 'get',
  method: 'GET',
  url: '/products/:id',
  async handle({ id }, { pg, orgId }) {
    const { rows } = await pg.query('SELECT * FROM product.products WHERE id = $1 AND org_id = $2', [
      id,
      orgId,
    ]);
    if (!rows[0]) throw new Error('not found');
    return rows[0];
  },
};
