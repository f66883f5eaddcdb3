import { ApiProperty } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';

/** A message that names one resource. */
export class IdDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all')
  id!: string;
}

export class MessageView {
  @ApiProperty({ example: 'License revoked' })
  message!: string;
}

export class FieldErrorView {
  @ApiProperty() field!: string;
  @ApiProperty() message!: string;
}

/** RFC 9457 problem details, the body of every error response. */
export class ProblemView {
  @ApiProperty({ example: 'about:blank' }) type!: string;
  @ApiProperty({ example: 'Not Found' }) title!: string;
  @ApiProperty({ example: 404 }) status!: number;
  @ApiProperty({ example: 'not_found' }) code!: string;
  @ApiProperty({ example: 'License 6f0c... does not exist' }) detail!: string;
  @ApiProperty({ type: [FieldErrorView], required: false }) errors?: FieldErrorView[];
}
