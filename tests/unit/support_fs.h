/*
 * support_fs.h — file-system helpers for unit tests that build a temporary tree.
 */
#ifndef SUPPORT_FS_H
#define SUPPORT_FS_H

/* Open descriptors of this process (entries of /proc/self/fd), -1 when unreadable. */
int sfs_count_fds(void);
/* rm -rf dir: 0 on success. */
int sfs_remove_tree(const char *dir);

#endif
