import 'reflect-metadata';
import {
  IdDto,
  Messages,
  PageQueryDto,
  PolicyListView,
  ProductListView,
  ProductView,
} from '@licensing/contracts';
import { PATTERN_METADATA } from '@nestjs/microservices/constants';
import { BusData, BusOrg, Handles } from './bus-handlers';

// The `@ts-expect-error` lines are the test: `npm run typecheck` fails if one of them compiles.
// The spec below only proves that the handlers still register their subjects.
class ProductHandlers {
  @Handles(Messages.product.get)
  get(@BusOrg() _orgId: string, @BusData() { id }: IdDto): Promise<ProductView> {
    return Promise.resolve({ id } as ProductView);
  }

  // @ts-expect-error the request parameter is a page query, but product.get sends an IdDto
  @Handles(Messages.product.get)
  getWithWrongRequest(@BusOrg() _orgId: string, @BusData() _query: PageQueryDto): Promise<ProductView> {
    return Promise.resolve({} as ProductView);
  }

  // @ts-expect-error product.get answers a ProductView, not a list
  @Handles(Messages.product.get)
  getWithWrongReply(@BusOrg() _orgId: string, @BusData() _ref: IdDto): Promise<ProductListView> {
    return Promise.resolve({} as ProductListView);
  }

  // @ts-expect-error a page query is assignable to a policy list query, but it would validate the
  // request with the wrong class and reject its product_id filter
  @Handles(Messages.policy.list)
  listWithBaseQuery(@BusOrg() _orgId: string, @BusData() _query: PageQueryDto): Promise<PolicyListView> {
    return Promise.resolve({} as PolicyListView);
  }

  // @ts-expect-error the request must be the last parameter, the one `@BusData()` reads
  @Handles(Messages.product.get)
  getWithoutRequest(@BusOrg() _orgId: string): Promise<ProductView> {
    return Promise.resolve({} as ProductView);
  }
}

describe('@Handles()', () => {
  it('registers the handler for the message subject', () => {
    const pattern: unknown = Reflect.getMetadata(PATTERN_METADATA, ProductHandlers.prototype.get);
    expect(pattern).toEqual([Messages.product.get.subject]);
  });
});
