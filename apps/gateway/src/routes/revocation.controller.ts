import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  CheckRevocationDto,
  CheckRevocationView,
  Messages,
  SyncReportDto,
  SyncResultView,
} from '@licensing/contracts';
import { BusClient, JsonText } from '@licensing/shared/messaging';
import { ApiProblems } from '../http/api-problems';
import { Operation } from '../http/operation';
import { Direct } from '../http/direct';
import { Answers } from '../http/answers';
import { routes } from '../http/routes';
import { AllowScopes, LicenseAction } from '../http/route-access';
import { SignedAnswer } from '../signed-answers/answer-signing';

@ApiTags('revocation')
@Controller(routes('licenses'))
export class RevocationController {
  constructor(private readonly bus: BusClient) {}

  @Post('check-revocation')
  @Operation({
    id: 'checkRevocation',
    summary: 'Check the status of serials',
    description:
      'The current status of 1 to 100 serials in one call (`ok`, `revoked`, `suspended`, `expired` or ' +
      '`not_found`), answered from a cache that every revocation and status change updates before ' +
      'it returns. A serial repeated is answered once, in the order of first appearance; another ' +
      "organization's serial is `not_found`.",
    example: { serials: ['LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC', 'LIC-CAD-0000000000000000'] },
  })
  @HttpCode(200)
  @AllowScopes('read', 'client')
  @Answers(Messages.revocation.check, {
    description: "One result per distinct serial; another organization's serial is not_found",
  })
  @ApiProblems()
  @Direct()
  @SignedAnswer()
  check(@Body() dto: CheckRevocationDto): Promise<JsonText<CheckRevocationView>> {
    return this.bus.forward(Messages.revocation.check, dto);
  }

  @Post('sync')
  @Operation({
    id: 'syncLicense',
    summary: 'Report usage and get the status',
    description:
      "An application's periodic report (machine, version, features used, seats in use), answered with " +
      "the license's current status. A `200` means the report is stored durably and will be counted " +
      'by analytics exactly once; send the same `report_id` when retrying. More seats in use than ' +
      'the license has are accepted, counted and flagged in `message`. A license token reports for ' +
      'its own serial only, a machine token for its own machine: anything else is `not_found` and ' +
      'is not counted.',
    example: {
      license_serial: 'LIC-PHOTO-EDITOR-7K3F9QX2M4W8T1ZC',
      hardware_fingerprint: 'machine-a',
      app_version: '2.4.1',
      features_used: ['pro'],
      seats_in_use: 1,
      report_id: '0b6a2f4e-5c1d-4e8f-9a7b-3c2d1e0f9a8b',
    },
  })
  @HttpCode(200)
  @AllowScopes('client', 'license', 'machine')
  @LicenseAction()
  @Answers(Messages.revocation.sync, {
    description: "The license's effective status; a 200 means the report is stored and will be counted",
  })
  @ApiProblems()
  @Direct()
  @SignedAnswer()
  sync(@Body() dto: SyncReportDto): Promise<JsonText<SyncResultView>> {
    return this.bus.forward(Messages.revocation.sync, dto);
  }
}
