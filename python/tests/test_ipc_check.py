"""python -m gpupeer check --ipc starts the Python interpreter again as its second process with
libgpupeer_c.so in LD_PRELOAD: the library's constructor must take that role before Python's
main runs, and leave every other process alone."""

import os
import socket
import subprocess
import sys

import gpupeer

MAIN = "print('main ran')"


def test_the_preloaded_library_answers_as_the_second_process_before_main():
    ours, theirs = socket.socketpair()
    env = dict(os.environ, LD_PRELOAD=gpupeer.library_path, GPUPEER_IPC_CHECK_CHILD=str(theirs.fileno()))
    child = subprocess.Popen([sys.executable, "-c", MAIN], env=env, pass_fds=[theirs.fileno()],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    theirs.close()
    ours.close()  # no request comes: the second process gives up (exit 3) without waiting
    out, err = child.communicate(timeout=30)
    assert b"main ran" not in out, "Python's main ran in the second process"
    assert child.returncode == 3, (child.returncode, err)


def test_the_preloaded_library_leaves_other_processes_alone():
    env = dict(os.environ, LD_PRELOAD=gpupeer.library_path)
    env.pop("GPUPEER_IPC_CHECK_CHILD", None)
    run = subprocess.run([sys.executable, "-c", MAIN], env=env, capture_output=True, timeout=30, check=False)
    assert (run.returncode, run.stdout) == (0, b"main ran\n"), run.stderr
