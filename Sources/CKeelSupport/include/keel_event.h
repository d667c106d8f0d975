#ifndef KEEL_EVENT_H
#define KEEL_EVENT_H

/// eventfd(0, EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC): a counter that one 8-byte write raises
/// by its value and one 8-byte read lowers by one, readable (for poll) while above zero — a
/// counting wake-up a thread can poll together with a socket (KeelModel's ThreadWakeUp). Returns
/// the descriptor, or -1 with errno set. A C shim because Swift's Glibc module does not see
/// <sys/eventfd.h>.
int keel_eventfd_semaphore(void);

#endif
