import { ApiProperty } from '@nestjs/swagger';
import { IsInt, IsUUID, Max, Min } from 'class-validator';
import { PageQueryDto } from '../common/pagination.dto';

/** The largest process id: a 32-bit unsigned integer covers Windows, Linux and macOS. */
export const MAX_PID = 4_294_967_295;

export class CreateProcessDto {
  @ApiProperty({
    minimum: 0,
    maximum: MAX_PID,
    example: 4242,
    description: "The process's id on the machine",
  })
  @IsInt()
  @Min(0)
  @Max(MAX_PID)
  pid!: number;
}

/** What the gateway sends for a process create: the activation from the path, and the body. */
export class CreateProcessMessage extends CreateProcessDto {
  @IsUUID('all') activation_id!: string;
}

/** One process of one activation, by the two ids of its path. */
export class ProcessRefDto {
  @IsUUID('all') activation_id!: string;
  @IsUUID('all') id!: string;
}

export class ListProcessesMessage extends PageQueryDto {
  @IsUUID('all') activation_id!: string;
}

export class ProcessView {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ format: 'uuid' }) activation_id!: string;
  @ApiProperty() pid!: number;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) last_heartbeat_at!: string;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'null: no heartbeat required',
  })
  expires_at!: string | null;
}

export class ProcessListView {
  @ApiProperty({ type: [ProcessView] }) processes!: ProcessView[];
  @ApiProperty() total!: number;
}

/** The license service's answer to a process create: the process, and whether it is new (201) or held already (200). */
export interface ProcessCreatedReply {
  process: ProcessView;
  created: boolean;
}
