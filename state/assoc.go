package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"sort"

	"github.com/dgraph-io/badger/v4"
)

// Associations: the (account, user) pairs the history has seen, each with
// a small id of its own, kept for sacctmgr and sshare (slurmdbd's
// association table, which the frontend does not ask a site to fill: on
// the embedded engine the associations are the ones jobs have used).
//
//	hist/p/<account>\x00                  an account: its id
//	hist/p/<account>\x00<uid>             a user in it: its id, then the user's name
//	meta/assoc_next_id                    the next id (1 and 2 are the root's)
//
// A job that named no account is kept with account "": the controller
// files it under the account such jobs run in (root on the embedded
// engine, the default project on Backend.AI), as slurmdbd files it under
// its user's default account.

var (
	prefixAssoc  = []byte("hist/p/")
	keyAssocNext = []byte("meta/assoc_next_id")
)

// RootAccount is the account of the association tree's root.
const RootAccount = "root"

// firstAssocID: 1 is the cluster's root association, 2 root's own user
// association (as a new slurmdbd has them).
const firstAssocID = 3

// Assoc is an association: an account's (User "") or a user's in an
// account (Account "": the jobs that named none).
type Assoc struct {
	ID      uint32
	Account string
	UID     uint32
	User    string // "" for an account's association
}

func assocKey(account string, uid uint32, user bool) []byte {
	k := append(append(append([]byte(nil), prefixAssoc...), account...), 0)
	if user {
		k = be32(k, uid)
	}
	return k
}

// assocTxn makes sure the job's account and (account, user) pair have
// associations (s.mu held, in the transaction that writes its history).
func (s *Store) assocTxn(txn *wtxn, j *Job) error {
	acct := j.Account
	if (acct == RootAccount || acct == "") && j.UserID == 0 {
		return nil // root's own: always there
	}
	if acct != RootAccount && acct != "" {
		if err := s.acctTxn(txn, acct); err != nil {
			return err
		}
	}
	return s.newAssoc(txn, assocKey(acct, j.UserID, true), j.UserName)
}

// acctTxn makes sure an account has its association.
func (s *Store) acctTxn(txn *wtxn, acct string) error {
	if acct == RootAccount || acct == "" {
		return nil
	}
	return s.newAssoc(txn, assocKey(acct, 0, false), "")
}

// newAssoc gives key the next id if it has none.
func (s *Store) newAssoc(txn *wtxn, k []byte, user string) error {
	if _, err := txn.Get(k); err == nil {
		return nil
	} else if !errors.Is(err, badger.ErrKeyNotFound) {
		return err
	}
	if s.assocNext == 0 {
		s.assocNext = firstAssocID
		if it, err := txn.Get(keyAssocNext); err == nil {
			if err := it.Value(func(v []byte) error {
				if len(v) == 4 {
					s.assocNext = binary.BigEndian.Uint32(v)
				}
				return nil
			}); err != nil {
				return err
			}
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
	}
	if err := txn.Set(k, append(be32(nil, s.assocNext), user...)); err != nil {
		return err
	}
	s.assocNext++
	return txn.Set(keyAssocNext, be32(nil, s.assocNext))
}

// Assocs lists the associations, accounts first then users, each by name.
func (s *Store) Assocs() ([]Assoc, error) {
	var out []Assoc
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixAssoc, PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.ValidForPrefix(prefixAssoc); it.Next() {
			k := it.Item().Key()[len(prefixAssoc):]
			i := 0
			for i < len(k) && k[i] != 0 {
				i++
			}
			if i == len(k) {
				continue
			}
			a := Assoc{Account: string(k[:i])}
			user := len(k) == i+5
			if user {
				a.UID = binary.BigEndian.Uint32(k[i+1:])
			}
			if err := it.Item().Value(func(v []byte) error {
				if len(v) >= 4 {
					a.ID = binary.BigEndian.Uint32(v)
					if user {
						a.User = string(v[4:])
					}
				}
				return nil
			}); err != nil {
				return err
			}
			if user && a.User == "" {
				a.User = "?"
			}
			out = append(out, a)
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].User == "") != (out[j].User == "") {
			return out[i].User == ""
		}
		if out[i].Account != out[j].Account {
			return out[i].Account < out[j].Account
		}
		return out[i].User < out[j].User
	})
	return out, err
}

// BackfillAssocs writes the associations of a history written before
// they were kept, once.
func (s *Store) BackfillAssocs() (int, error) {
	if b, err := s.Meta("assocs_backfilled"); err != nil || len(b) > 0 {
		return 0, err
	}
	var jobs []Job
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefixHistJob, PrefetchValues: true})
		defer it.Close()
		seen := map[string]bool{}
		for it.Rewind(); it.ValidForPrefix(prefixHistJob); it.Next() {
			var h HistJob
			if err := it.Item().Value(func(v []byte) error { return decodeHistRecord(v, &h) }); err != nil {
				return err
			}
			k := string(be32([]byte(h.Account+"\x00"), h.UserID))
			if !seen[k] {
				seen[k] = true
				jobs = append(jobs, Job{Account: h.Account, UserID: h.UserID, UserName: h.UserName})
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	err = s.commit(int64(len(jobs))*128+64, func(txn *wtxn) error {
		for i := range jobs {
			if err := s.assocTxn(txn, &jobs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return len(jobs), s.PutMeta("assocs_backfilled", []byte("1"))
}

// ImportedDirectory is the accounts and users of a slurmdbd database an
// import read (meta/imported_directory): what the history's associations
// do not say, descriptions, the account tree, shares, default accounts
// and administrators.
type ImportedDirectory struct {
	Accounts []ImportedAccount `json:"accounts"`
	Users    []ImportedUser    `json:"users"`
	Assocs   []ImportedAssoc   `json:"assocs"`
}

// ImportedAccount is an account of the imported database.
type ImportedAccount struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	Organization string `json:"organization"`
	Parent       string `json:"parent,omitempty"`
}

// ImportedUser is a user of the imported database.
type ImportedUser struct {
	Name       string `json:"name"`
	UID        uint32 `json:"uid"`
	UIDKnown   bool   `json:"uid_known"`
	AdminLevel uint16 `json:"admin_level"` // SLURMDB_ADMIN_*: 1 none, 2 operator, 3 administrator
	Default    string `json:"default_account,omitempty"`
}

// ImportedAssoc is an association (User "": the account's own).
type ImportedAssoc struct {
	Account string `json:"account"`
	User    string `json:"user,omitempty"`
	Shares  uint32 `json:"shares"`
}

var keyImportedDir = "imported_directory"

// PutImportedDirectory keeps d, and gives its users' associations ids
// (those with a known uid; the others are listed from d).
func (s *Store) PutImportedDirectory(d *ImportedDirectory) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	uids := map[string]ImportedUser{}
	for _, u := range d.Users {
		uids[u.Name] = u
	}
	var jobs []Job
	for _, a := range d.Assocs {
		if a.User == "" {
			jobs = append(jobs, Job{Account: a.Account, UserID: 0xfffffffe}) // the account's own (below)
			continue
		}
		if u := uids[a.User]; u.UIDKnown {
			jobs = append(jobs, Job{Account: a.Account, UserID: u.UID, UserName: a.User})
		}
	}
	s.mu.Lock()
	err = s.commit(int64(len(b)+len(jobs)*128)+64, func(txn *wtxn) error {
		for i := range jobs {
			j := &jobs[i]
			if j.UserID == 0xfffffffe {
				// Only the account: a pair with no user would be made
				// otherwise.
				if err := s.acctTxn(txn, j.Account); err != nil {
					return err
				}
				continue
			}
			if err := s.assocTxn(txn, j); err != nil {
				return err
			}
		}
		return txn.Set(append(append([]byte(nil), prefixMeta...), keyImportedDir...), b)
	})
	s.mu.Unlock()
	return err
}

// ImportedDirectoryOf reads what PutImportedDirectory kept (nil: none).
func (s *Store) ImportedDirectoryOf() (*ImportedDirectory, error) {
	b, err := s.Meta(keyImportedDir)
	if err != nil || len(b) == 0 {
		return nil, err
	}
	d := &ImportedDirectory{}
	return d, json.Unmarshal(b, d)
}
