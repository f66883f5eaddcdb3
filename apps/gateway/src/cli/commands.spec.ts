import { MAIN_HELP, parseCommand } from './commands';
import { KEYS_HELP } from './keys';
import { ORG_HELP } from './org';

describe('parseCommand', () => {
  it('answers the main help for --help, -h and help', () => {
    for (const argv of [['--help'], ['-h'], ['help'], ['nothing', '--help']]) {
      expect(parseCommand(argv)).toEqual({ kind: 'help', text: MAIN_HELP });
    }
  });

  it('answers the usage, as an error, for no command or an unknown one', () => {
    expect(parseCommand([])).toEqual({ kind: 'usage', text: MAIN_HELP });
    expect(parseCommand(['licenses', 'list'])).toEqual({ kind: 'usage', text: MAIN_HELP });
  });

  it("answers a group's help for the group alone or an unknown verb of it", () => {
    expect(parseCommand(['org', '--help'])).toEqual({ kind: 'help', text: ORG_HELP.org });
    expect(parseCommand(['org', 'delete', 'x'])).toEqual({ kind: 'usage', text: ORG_HELP.org });
    expect(parseCommand(['keys'])).toEqual({ kind: 'usage', text: KEYS_HELP.keys });
    expect(parseCommand(['keys', 'revoke', '-h'])).toEqual({ kind: 'help', text: KEYS_HELP.keys });
  });

  it("answers a command's own help wherever --help stands among its arguments", () => {
    expect(parseCommand(['org', 'create', '--help'])).toEqual({ kind: 'help', text: ORG_HELP.create });
    expect(parseCommand(['org', 'limits', 'Acme', '-h'])).toEqual({ kind: 'help', text: ORG_HELP.limits });
    expect(parseCommand(['keys', 'create', '--org', 'x', '--help'])).toEqual({
      kind: 'help',
      text: KEYS_HELP.create,
    });
  });

  it('dispatches to the command its group names', () => {
    expect(parseCommand(['org', 'create', 'Acme'])).toEqual({ kind: 'org-create', name: 'Acme' });
    expect(parseCommand(['keys', 'create', '--org', 'Acme'])).toMatchObject({ kind: 'keys-create' });
  });

  it('writes every help text as full lines that show how to run the command', () => {
    const texts = [MAIN_HELP, ...Object.values(ORG_HELP), ...Object.values(KEYS_HELP)];
    for (const text of texts) {
      expect(text).toMatch(/usage: npm run \S+ -- /);
      expect(text.endsWith('\n')).toBe(true);
    }
  });
});
