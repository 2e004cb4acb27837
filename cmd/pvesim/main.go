// Command pvesim serves a simulated Proxmox VE API.
package main

import "fmt"

func main() {
	fmt.Println("pvesim: not implemented yet")
}
