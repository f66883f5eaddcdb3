import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsString, Length } from 'class-validator';
import { API_KEY_SCOPES, ApiKeyScope } from '../http/auth-context';

export class CreateApiKeyDto {
  @ApiProperty({ minLength: 1, maxLength: 255, example: 'CI deploys' })
  @IsString()
  @Length(1, 255)
  name!: string;

  @ApiProperty({
    enum: API_KEY_SCOPES,
    isArray: true,
    description:
      'admin: everything; read: GET plus verify and check-revocation; client: what a shipped application needs',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(API_KEY_SCOPES.length)
  @ArrayUnique()
  @IsIn(API_KEY_SCOPES, { each: true })
  scopes!: ApiKeyScope[];
}

export class ApiKeyView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: API_KEY_SCOPES, isArray: true }) scopes!: ApiKeyScope[];
  @ApiProperty({ example: 'lk_Xq3v9aB', description: 'The first 10 characters of the key, to recognise it' })
  prefix!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class CreatedApiKeyView extends ApiKeyView {
  @ApiProperty({ description: 'The key itself. Shown only in this response.' }) key!: string;
}

/** The key a request was made with: what a client (the console) needs to know of its own key. */
export class CurrentApiKeyView extends ApiKeyView {
  @ApiProperty({ format: 'uuid' }) org_id!: string;
  @ApiProperty({ description: "The organization's name" }) org_name!: string;
}

export class ApiKeyListView {
  @ApiProperty({ type: [ApiKeyView] }) api_keys!: ApiKeyView[];
  @ApiProperty() total!: number;
}
