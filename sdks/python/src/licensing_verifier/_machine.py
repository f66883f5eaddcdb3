"""This machine's fingerprint, and report ids that grow with time."""

import hashlib
import re
import secrets
import subprocess
import sys
import time
from typing import Callable, List, Optional, Sequence

from ._errors import LicensingError

_LINUX_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")
_BSD_FILES = ("/etc/hostid",)
_MAC_UUID = re.compile(r'"IOPlatformUUID"\s*=\s*"([^"]+)"')


class NoMachineIdError(LicensingError, RuntimeError):
    """The system does not say which machine this is: give the client a fingerprint of your own."""


def machine_fingerprint(salt: str = "") -> str:
    """A stable fingerprint of this machine: 64 hex digits.

    It is the SHA-256 of the system's machine id, so the id itself is never sent. The id is
    `/etc/machine-id` on Linux, `IOPlatformUUID` on macOS, `MachineGuid` on Windows and
    `/etc/hostid` on the BSDs. `salt` gives one machine another fingerprint per application.
    Clones of one disk image share a machine id: regenerate it when you clone.
    Raises NoMachineIdError when the system has none.
    """
    for source in _sources():
        machine_id = source()
        if machine_id:
            return hashlib.sha256(
                ("licensing-machine\n%s\n%s" % (salt, machine_id)).encode("utf-8")
            ).hexdigest()
    raise NoMachineIdError("this system has no machine id: pass the client a fingerprint of your own")


def _sources() -> List[Callable[[], Optional[str]]]:
    if sys.platform == "win32":
        return [_windows_machine_guid]
    if sys.platform == "darwin":
        return [_mac_platform_uuid]
    return [lambda: _first_line(_LINUX_FILES + _BSD_FILES)]


def _first_line(paths: Sequence[str]) -> Optional[str]:
    for path in paths:
        try:
            with open(path, encoding="utf-8") as file:
                line = file.readline().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if line:
            return line
    return None


def _mac_platform_uuid() -> Optional[str]:
    try:
        done = subprocess.run(
            ["/usr/sbin/ioreg", "-rd1", "-c", "IOPlatformExpertDevice"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = _MAC_UUID.search(done.stdout)
    return match.group(1) if match else None


def _windows_machine_guid() -> Optional[str]:
    if sys.platform != "win32":
        return None
    import winreg

    try:
        flags = winreg.KEY_READ | winreg.KEY_WOW64_64KEY
        with winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"SOFTWARE\Microsoft\Cryptography", 0, flags) as key:
            value, _ = winreg.QueryValueEx(key, "MachineGuid")
    except OSError:
        return None
    return value if isinstance(value, str) else None


def time_ordered_uuid(now: Optional[float] = None) -> str:
    """A version-7 UUID (RFC 9562): 48 bits of Unix milliseconds, then random bits.

    Report ids that grow with time keep the service's index of them compact. The random bits keep
    them unguessable. `now` is Unix seconds (default: the clock).
    """
    ms = int((time.time() if now is None else now) * 1000) & ((1 << 48) - 1)
    data = bytearray(ms.to_bytes(6, "big") + secrets.token_bytes(10))
    data[6] = (data[6] & 0x0F) | 0x70
    data[8] = (data[8] & 0x3F) | 0x80
    text = data.hex()
    return "%s-%s-%s-%s-%s" % (text[:8], text[8:12], text[12:16], text[16:20], text[20:])
