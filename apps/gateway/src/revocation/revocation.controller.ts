import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CheckRevocationDto,
  CheckRevocationView,
  Messages,
  SyncReportDto,
  SyncResultView,
} from '@licensing/contracts';
import { BusClient } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Direct } from '../http/direct-routes';
import { Answers } from '../http/answers';
import { routes } from '../http/routes';
import { AllowScopes } from '../identity/scopes';

@ApiTags('revocation')
@Controller(routes('licenses'))
export class RevocationController {
  constructor(private readonly bus: BusClient) {}

  @Post('check-revocation')
  @HttpCode(200)
  @AllowScopes('read', 'client')
  @Answers(Messages.revocation.check, {
    description: "One result per distinct serial; another organization's serial is not_found",
  })
  @ApiProblems()
  @Direct()
  check(@Body() dto: CheckRevocationDto): Promise<CheckRevocationView> {
    return this.bus.send(Messages.revocation.check, dto);
  }

  @Post('sync')
  @HttpCode(200)
  @AllowScopes('client')
  @Answers(Messages.revocation.sync, {
    description: "The license's effective status; a 200 means the report is stored and will be counted",
  })
  @ApiProblems()
  @Direct()
  sync(@Body() dto: SyncReportDto): Promise<SyncResultView> {
    return this.bus.send(Messages.revocation.sync, dto);
  }
}
