// Command provider runs the Crossplane provider for Proxmox VE.
package main

import "fmt"

func main() {
	fmt.Println("provider-proxmox: not implemented yet")
}
