import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import {
  CreateLicenseDto,
  LicenseListView,
  LicenseView,
  ListLicensesQueryDto,
  MessageView,
  Messages,
  UpdateLicenseDto,
  ValidateLicenseDto,
  ValidationResultView,
  VerifyLicenseDto,
  VerifyResultView,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Direct } from '../http/direct-routes';
import { Answers } from '../http/answers';
import { routes, uuidParam } from '../http/routes';
import { Idempotent } from '../idempotency/idempotency.interceptor';
import { AllowScopes } from '../identity/scopes';

@ApiTags('licenses')
@Controller(routes('licenses'))
export class LicensesController {
  constructor(private readonly bus: BusClient) {}

  @Post()
  @Idempotent()
  @Answers(Messages.license.create, { status: 201, description: 'The license, with its signed license_blob' })
  @ApiProblems(404, 422)
  create(@Body() dto: CreateLicenseDto): Promise<LicenseView> {
    return this.bus.send(Messages.license.create, dto);
  }

  @Get()
  @AllowScopes('read')
  @Answers(Messages.license.list)
  @ApiProblems()
  list(@Query() query: ListLicensesQueryDto): Promise<LicenseListView> {
    return this.bus.send(Messages.license.list, query);
  }

  @Post('verify')
  @HttpCode(200)
  @AllowScopes('read', 'client')
  @Answers(Messages.license.verify, { description: 'valid is true only when errors is empty' })
  @ApiProblems(404)
  @Direct()
  verify(@Body() dto: VerifyLicenseDto): Promise<VerifyResultView> {
    return this.bus.send(Messages.license.verify, dto);
  }

  @Post('validate')
  @HttpCode(200)
  @AllowScopes('client')
  @Answers(Messages.license.validate, { description: 'valid is true only for code VALID' })
  @ApiProblems()
  @Direct()
  validate(@Body() dto: ValidateLicenseDto): Promise<ValidationResultView> {
    return this.bus.send(Messages.license.validate, dto);
  }

  @Get(':id')
  @AllowScopes('read')
  @Answers(Messages.license.get)
  @ApiProblems(404)
  @Direct()
  get(@Param('id', uuidParam) id: string): Promise<LicenseView> {
    return this.bus.send(Messages.license.get, { id });
  }

  @Get(':id/download')
  @AllowScopes('read')
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({
    description: 'The .lic file: a compact JWS',
    schema: { type: 'string', format: 'binary' },
  })
  @ApiProblems(404)
  async download(
    @Param('id', uuidParam) id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Buffer> {
    const license = await this.bus.send(Messages.license.get, { id });
    void reply
      .header('content-type', 'application/octet-stream')
      .header('content-disposition', `attachment; filename="${license.serial}.lic"`);
    return Buffer.from(license.license_blob!, 'base64');
  }

  @Patch(':id')
  @Answers(Messages.license.update, { description: 'The changed license, signed again (new license_blob)' })
  @ApiProblems(404, 409)
  update(@Param('id', uuidParam) id: string, @Body() changes: UpdateLicenseDto): Promise<LicenseView> {
    return this.bus.send(Messages.license.update, { id, changes });
  }

  @Delete(':id')
  @HttpCode(200)
  @Answers(Messages.license.revoke)
  @ApiProblems(404)
  revoke(@Param('id', uuidParam) id: string): Promise<MessageView> {
    return this.bus.send(Messages.license.revoke, { id });
  }
}
