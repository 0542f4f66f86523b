#!/usr/bin/env node
// The `seedline` binary: runs the CLI on this process's arguments, streams and environment.
import { EXIT_OK } from "./command.js";
import { makeOutput } from "./output.js";
import { runCli } from "./run.js";

// A reader that closes the pipe early (`seedline export X | head`) is not a failure of ours.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? EXIT_OK);
  throw error;
});

process.exitCode = await runCli(
  process.argv.slice(2),
  makeOutput(process.stdout, process.stderr, process.env),
  process.env,
);

// Every command is done here; a handle left open (stdin, a timer of a library) must not keep the
// process alive. stdout and stderr are synchronous for files and pipes, so nothing is lost.
setTimeout(() => process.exit(), 1000).unref();
