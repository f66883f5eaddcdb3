import { CreateProducts1795375480711 } from './1795375480711-CreateProducts';

/** In order of application; the timestamp in each name is when it was generated. */
export const PRODUCT_MIGRATIONS = [CreateProducts1795375480711];
