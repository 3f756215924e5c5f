/**
 * What an attachment's `FileName` may be (CONTRACT section 12): no path separator or control
 * character, nothing invisible that could disguise its extension, and no extension on Amazon SES's
 * list of unsupported attachment types, read as Windows reads it.
 */
import { CONTROL_CHARACTERS } from '../shared/domain/header-safety';

/**
 * Amazon SES's published list of unsupported attachment types ("Amazon SES unsupported
 * attachment types", SES developer guide), by extension.
 */
export const UNSUPPORTED_EXTENSIONS: ReadonlySet<string> = new Set(
  ('ade adp app asp bas bat cer chm cmd com cpl crt csh der exe fxp gadget hlp hta inf ins isp its js jse ksh lib lnk ' +
    'mad maf mag mam maq mar mas mat mau mav maw mda mdb mde mdt mdw mdz msc msh msh1 msh2 mshxml msh1xml msh2xml msi msp mst ' +
    'ops pcd pif plg prf prg reg scf scr sct shb shs sys ps1 ps1xml ps2 ps2xml psc1 psc2 tmp url vb vbe vbs vps vsmacros vss ' +
    'vst vsw vxd ws wsc wsf wsh xnk').split(' '),
);

const FILE_NAME_FORBIDDEN = /[/\\]/;
/**
 * Unicode format characters (general category Cf): the bidirectional controls U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069 and U+061C, and the invisible ones beside them (zero-width
 * space and joiners, soft hyphen, U+FEFF). `invoice\u202Efdp.zip` shows as `invoicepdf.zip`
 * while it is a `.zip` (security audit round 3, finding 7). The other code points Unicode draws
 * as nothing (variation selectors, the combining grapheme joiner, Hangul fillers …) are part of
 * ordinary names (`☀️ summer.png`, Mongolian, Japanese ideographic variants): they are refused
 * nowhere, but dropped from the end before the extension is read (`extensionOf`).
 */
const FORMAT_CHARACTERS = /\p{Cf}/u;

/**
 * The extension SES would judge the file by. Windows ignores trailing dots and spaces, so they are
 * dropped first, with every other blank that shows as a space (no-break, ideographic, Braille
 * blank …) and every code point drawn as nothing (Default_Ignorable_Code_Point): `a.exe\u034f`
 * shows as `a.exe`. A name that is only an extension has one: Windows runs `.exe` as a program.
 */
export function extensionOf(fileName: string): string | undefined {
  const name = fileName.replace(/[.\p{White_Space}\u2800\p{Default_Ignorable_Code_Point}]+$/u, '');
  const dot = name.lastIndexOf('.');
  return dot < 0 ? undefined : name.slice(dot + 1).toLowerCase();
}

/** `setup.exe::$DATA` or `setup.exe:x:$DATA`: an NTFS stream of `setup.exe`, to Windows. */
const NTFS_STREAM = /^(.*?):[^:]*:\$[A-Za-z_]+$/;

/** Whether a file name's extension is on SES's list, also behind an NTFS stream name. */
function unsupportedExtension(fileName: string): string | undefined {
  const file = NTFS_STREAM.exec(fileName)?.[1];
  return [extensionOf(fileName), file === undefined ? undefined : extensionOf(file)].find((extension) => extension !== undefined && UNSUPPORTED_EXTENSIONS.has(extension));
}

/** Why SES or a reader's mail client must not get this file name; undefined when it may. */
export function fileNameRefusal(fileName: string): string | undefined {
  if (FILE_NAME_FORBIDDEN.test(fileName) || CONTROL_CHARACTERS.test(fileName)) return 'must not contain "/", "\\" or control characters';
  if (FORMAT_CHARACTERS.test(fileName)) return 'must not contain Unicode bidirectional or other invisible format characters (U+200E, U+202E …): they disguise the extension';
  const extension = unsupportedExtension(fileName);
  return extension === undefined ? undefined : `Amazon SES does not accept ".${extension}" attachments (its list of unsupported attachment types)`;
}
