import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Length } from 'class-validator';
import { Optional } from '../common/validation';
import { KEY_ALGORITHMS, KeyAlgorithm } from '@licensing/license-format';

export class CreateKeyPairDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 255, example: 'Production signing key' })
  @Optional()
  @IsString()
  @Length(1, 255)
  name?: string;

  @ApiPropertyOptional({ enum: KEY_ALGORITHMS, default: 'ed25519' })
  @Optional()
  @IsIn(KEY_ALGORITHMS)
  algorithm?: KeyAlgorithm;
}

export class KeyPairView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: KEY_ALGORITHMS }) algorithm!: KeyAlgorithm;
  @ApiProperty({ description: 'PEM (SPKI)' }) public_key!: string;
  @ApiProperty({ description: 'SHA-256 of the DER public key, lowercase hex' }) fingerprint!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class KeyPairListView {
  @ApiProperty({ type: [KeyPairView] }) key_pairs!: KeyPairView[];
  @ApiProperty() total!: number;
}
