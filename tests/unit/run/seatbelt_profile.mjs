// The Seatbelt profile srt itself generates on macOS from a settings file (stdin), printed
// whole: wrapCommandWithSandboxMacOS is pure string building, so it runs on any platform.
import fs from "node:fs";
const utils = await import(process.argv[2] + "/dist/sandbox/macos-sandbox-utils.js");
const s = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(utils.wrapCommandWithSandboxMacOS({
  command: "true", needsNetworkRestriction: true, httpProxyPort: 3128, socksProxyPort: 1080,
  readConfig: { denyOnly: s.filesystem.denyRead, allowWithinDeny: s.filesystem.allowRead },
  writeConfig: { allowOnly: s.filesystem.allowWrite, denyWithinAllow: s.filesystem.denyWrite },
  allowLocalBinding: s.network.allowLocalBinding, binShell: "/bin/sh",
}));
