import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { MessageDefinition } from '@licensing/contracts';

/**
 * Documents a route's success answer as the reply of the bus message it forwards: the schema comes
 * from the message's definition, the same one that types `bus.send` and the service's handler, so
 * the document cannot describe a reply the service does not send.
 */
export function Answers(
  message: MessageDefinition<unknown, unknown>,
  { status = 200, description }: { status?: 200 | 201 | 202; description?: string } = {},
): MethodDecorator {
  if (!message.replyType) throw new Error(`${message.subject} declares no reply class to document`);
  return applyDecorators(ApiResponse({ status, type: message.replyType, description }));
}
