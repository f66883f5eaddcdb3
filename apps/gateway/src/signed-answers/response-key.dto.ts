import { ApiProperty } from '@nestjs/swagger';

/** An organization's public response key, as a JWK (RFC 8037: OKP, Ed25519). */
export class ResponseKeyJwk {
  @ApiProperty({ enum: ['OKP'] }) kty!: 'OKP';
  @ApiProperty({ enum: ['Ed25519'] }) crv!: 'Ed25519';
  @ApiProperty({ description: 'The public key, base64url' }) x!: string;
  @ApiProperty({ format: 'uuid', description: "The key's id: the `kid` of the signatures it makes" })
  kid!: string;
  @ApiProperty({ enum: ['EdDSA'] }) alg!: 'EdDSA';
  @ApiProperty({ enum: ['sig'] }) use!: 'sig';
  @ApiProperty({
    enum: ['active', 'next', 'retired'],
    description:
      '`active` signs answers now; `next` will after a rotation (ship it before); `retired` signed ' +
      'answers before a rotation (kept until deleted). A member verifiers that do not know it ignore.',
  })
  status!: 'active' | 'next' | 'retired';
}

export class ResponseKeySetView {
  @ApiProperty({ type: [ResponseKeyJwk] }) keys!: ResponseKeyJwk[];
}
