import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Length } from 'class-validator';
import { Optional } from '../common/validation';

export const KEY_PAIR_ALGORITHMS = ['ed25519', 'ecdsa-p256', 'rsa-3072'] as const;
export type KeyPairAlgorithm = (typeof KEY_PAIR_ALGORITHMS)[number];

export class CreateKeyPairDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 255, example: 'Production signing key' })
  @Optional()
  @IsString()
  @Length(1, 255)
  name?: string;

  @ApiPropertyOptional({ enum: KEY_PAIR_ALGORITHMS, default: 'ed25519' })
  @Optional()
  @IsIn(KEY_PAIR_ALGORITHMS)
  algorithm?: KeyPairAlgorithm;
}

export class KeyPairView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: KEY_PAIR_ALGORITHMS }) algorithm!: KeyPairAlgorithm;
  @ApiProperty({ description: 'PEM (SPKI)' }) public_key!: string;
  @ApiProperty({ description: 'SHA-256 of the DER public key, lowercase hex' }) fingerprint!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class KeyPairListView {
  @ApiProperty({ type: [KeyPairView] }) key_pairs!: KeyPairView[];
  @ApiProperty() total!: number;
}
