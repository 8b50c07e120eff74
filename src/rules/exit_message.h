/*
 * exit_message.h
 *		The postmaster's message about a child's exit, parsed (no PostgreSQL
 *		headers): what crashes.c keeps of the message it catches.
 */
#ifndef PROCMEM_EXIT_MESSAGE_H
#define PROCMEM_EXIT_MESSAGE_H

/*
 * The pid and signal (or exit code) in the postmaster's message about a
 * child's exit, whatever language it is in: the integer after the last
 * "PID", else the first one, and the next (-1 when there is none). Returns
 * 0, setting nothing, when there is no pid.
 */
extern int	exit_message_parse(const char *message, int *pid, int *number);

#endif							/* PROCMEM_EXIT_MESSAGE_H */
