import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsUUID, Max, Min } from 'class-validator';
import { Optional } from '../common/validation';
import { MAX_CHECKOUT_TTL_SECONDS, MIN_CHECKOUT_TTL_SECONDS } from '../credentials/credential.dto';

/** The body of a checkout: how long the file lives. */
export class CheckoutDto {
  @ApiPropertyOptional({
    minimum: MIN_CHECKOUT_TTL_SECONDS,
    maximum: MAX_CHECKOUT_TTL_SECONDS,
    description:
      "Seconds the file stays valid (default: the organization's `checkout_ttl_seconds`, 30 days " +
      "unless changed). The file never outlives the license's `valid_until`.",
    example: 604_800,
  })
  @Optional()
  @IsInt()
  @Min(MIN_CHECKOUT_TTL_SECONDS)
  @Max(MAX_CHECKOUT_TTL_SECONDS)
  ttl_seconds?: number;
}

/** What the gateway sends the license service: the license or activation, and the TTL resolved. */
export class CheckoutMessage {
  @IsUUID('all')
  id!: string;

  @IsInt()
  @Min(MIN_CHECKOUT_TTL_SECONDS)
  @Max(MAX_CHECKOUT_TTL_SECONDS)
  ttl_seconds!: number;
}

export class CheckoutView {
  @ApiProperty({
    description:
      "The checked-out license file, base64 of its bytes (a compact JWS signed now with the product's " +
      'key). Its `exp` claim is the file expiry.',
  })
  license_blob!: string;
  @ApiProperty({ format: 'date-time', description: 'When the file was signed (its `iat`)' })
  issued_at!: string;
  @ApiProperty({
    format: 'date-time',
    description: "When the file stops verifying (its `exp`): never after the license's `valid_until`",
  })
  expires_at!: string;
}
