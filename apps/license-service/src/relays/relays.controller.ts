import {
  CreateRelayFileMessage,
  IdDto,
  ImportRelayReportDto,
  ListRelayFilesQueryDto,
  Messages,
  RelayFileCreatedView,
  RelayFileListView,
  RelayFileView,
  RelayReportImportView,
} from '@licensing/contracts';
import { BusController, BusData, BusOrg, Handles } from '@licensing/shared/messaging';
import { RelayFilesService } from './relay-files.service';
import { RelayReportsService } from './relay-reports.service';

@BusController()
export class RelaysController {
  constructor(
    private readonly files: RelayFilesService,
    private readonly reports: RelayReportsService,
  ) {}

  @Handles(Messages.relay.createFile)
  createFile(
    @BusOrg() orgId: string,
    @BusData() message: CreateRelayFileMessage,
  ): Promise<RelayFileCreatedView> {
    return this.files.create(orgId, message);
  }

  @Handles(Messages.relay.listFiles)
  listFiles(@BusOrg() orgId: string, @BusData() query: ListRelayFilesQueryDto): Promise<RelayFileListView> {
    return this.files.list(orgId, query);
  }

  @Handles(Messages.relay.getFile)
  getFile(@BusOrg() orgId: string, @BusData() { id }: IdDto): Promise<RelayFileView> {
    return this.files.get(orgId, id);
  }

  @Handles(Messages.relay.importReport)
  importReport(
    @BusOrg() orgId: string,
    @BusData() dto: ImportRelayReportDto,
  ): Promise<RelayReportImportView> {
    return this.reports.import(orgId, dto);
  }
}
